import { type Context } from 'hono';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { parseWith, readJson } from '../../http/validate.ts';
import {
  autoscalerEnvelope,
  autoscalerList,
  createAutoscalerSchema,
  updateAutoscalerSchema,
} from './autoscalers.schemas.ts';
import { type AutoscalersService } from './autoscalers.service.ts';

/** /v1/apps/:app/autoscalers — go-scalingo autoscalers.go, the CLI's autoscalers-* and the Terraform resource. */
export function autoscalersRoutes(deps: { autoscalers: AutoscalersService }) {
  const { autoscalers } = deps;
  const r = new ApiRoutes('autoscalers');
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/autoscalers',
      summary: 'List the autoscalers of an app',
      responses: { 200: autoscalerList },
    },
    (c) => c.json({ autoscalers: autoscalers.list(user(c), c.get('app').id) }),
  );
  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/autoscalers/:id',
      summary: 'Get an autoscaler',
      responses: { 200: autoscalerEnvelope },
    },
    (c, { params }) => c.json({ autoscaler: autoscalers.show(user(c), c.get('app').id, params.id) }),
  );

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/autoscalers',
      summary: 'Create an autoscaler',
      body: createAutoscalerSchema,
      bodyRoot: 'autoscaler',
      responses: { 201: autoscalerEnvelope },
    },
    (c, { body: { autoscaler } }) =>
      c.json({ autoscaler: autoscalers.create(user(c), c.get('app').id, autoscaler) }, 201),
  );

  r.add(
    {
      method: ['patch', 'put'],
      path: '/v1/apps/:app/autoscalers/:id',
      summary: 'Update an autoscaler',
      description: 'The body may be wrapped in `autoscaler` (npm client) or not (go-scalingo).',
      body: updateAutoscalerSchema,
      rawBody: true,
      responses: { 200: autoscalerEnvelope },
    },
    async (c, { params }) => {
      const raw = await readJson(c);
      // go-scalingo sends {"max_containers":5}; the npm client {"autoscaler":{"max_containers":5}}.
      const wrapped =
        raw && typeof raw === 'object' && !Array.isArray(raw) && 'autoscaler' in raw ? raw : { autoscaler: raw };
      const { autoscaler } = parseWith(updateAutoscalerSchema, wrapped, 'autoscaler');
      return c.json({ autoscaler: autoscalers.update(user(c), c.get('app').id, params.id, autoscaler) });
    },
  );

  r.add(
    {
      method: 'delete',
      path: '/v1/apps/:app/autoscalers/:id',
      summary: 'Delete an autoscaler',
      responses: { 204: null },
    },
    (c, { params }) => {
      autoscalers.remove(user(c), c.get('app').id, params.id);
      return c.body(null, 204);
    },
  );
  return r;
}
