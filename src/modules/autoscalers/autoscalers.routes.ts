import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { jsonBody, parseWith, readJson } from '../../http/validate.ts';
import { createAutoscalerSchema, updateAutoscalerSchema } from './autoscalers.schemas.ts';
import type { AutoscalersService } from './autoscalers.service.ts';

/** /v1/apps/:app/autoscalers — go-scalingo autoscalers.go, the CLI's autoscalers-* and the Terraform resource. */
export function autoscalersRoutes(deps: { autoscalers: AutoscalersService }) {
  const { autoscalers } = deps;
  const r = new Hono<AppEnv>();
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  r.get('/v1/apps/:app/autoscalers', (c) => c.json({ autoscalers: autoscalers.list(user(c), c.req.param('app')) }));
  r.get('/v1/apps/:app/autoscalers/:id', (c) => c.json({ autoscaler: autoscalers.show(user(c), c.req.param('app'), c.req.param('id')) }));

  r.post('/v1/apps/:app/autoscalers', async (c) => {
    const { autoscaler } = await jsonBody(c, createAutoscalerSchema, 'autoscaler');
    return c.json({ autoscaler: autoscalers.create(user(c), c.req.param('app'), autoscaler) }, 201);
  });

  const update = async (c: Context<AppEnv, '/v1/apps/:app/autoscalers/:id'>) => {
    const raw = await readJson(c);
    // go-scalingo sends {"max_containers":5}; the npm client {"autoscaler":{"max_containers":5}}.
    const wrapped = raw && typeof raw === 'object' && !Array.isArray(raw) && 'autoscaler' in raw ? raw : { autoscaler: raw };
    const { autoscaler } = parseWith(updateAutoscalerSchema, wrapped, 'autoscaler');
    return c.json({ autoscaler: autoscalers.update(user(c), c.req.param('app'), c.req.param('id'), autoscaler) });
  };
  r.patch('/v1/apps/:app/autoscalers/:id', update);
  r.put('/v1/apps/:app/autoscalers/:id', update);

  r.delete('/v1/apps/:app/autoscalers/:id', (c) => {
    autoscalers.remove(user(c), c.req.param('app'), c.req.param('id'));
    return c.body(null, 204);
  });
  return r;
}
