import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { parseWith, readJson } from '../../http/validate.ts';
import { wrapped } from '../notifiers/notifiers.routes.ts';
import type { AlertsService } from './alerts.service.ts';
import { createAlertSchema, updateAlertSchema } from './alerts.schemas.ts';

export function alertsRoutes(deps: { alerts: AlertsService }) {
  const { alerts } = deps;
  const r = new Hono<AppEnv>();
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  // #26
  r.get('/v1/apps/:app/alerts', (c) => c.json({ alerts: alerts.list(user(c), c.req.param('app')) }));

  // #27 — wrapped under `alert`, as both official clients send it.
  r.post('/v1/apps/:app/alerts', async (c) => {
    const { alert } = parseWith(createAlertSchema, await readJson(c), 'alert');
    return c.json({ alert: alerts.create(user(c), c.req.param('app'), alert) }, 201);
  });

  // #28
  r.get('/v1/apps/:app/alerts/:id', (c) => c.json({ alert: alerts.show(user(c), c.req.param('app'), c.req.param('id')) }));

  // #29 — the npm client wraps the body in `alert`; go-scalingo sends AlertUpdateParams unwrapped
  // (with remind_every as an integer of ns). Both are accepted, on PATCH and PUT.
  const update = async (c: Context<AppEnv, '/v1/apps/:app/alerts/:id'>) => {
    const { alert } = parseWith(updateAlertSchema, wrapped(await readJson(c), 'alert'), 'alert');
    return c.json({ alert: alerts.update(user(c), c.req.param('app'), c.req.param('id'), alert) });
  };
  r.patch('/v1/apps/:app/alerts/:id', update);
  r.put('/v1/apps/:app/alerts/:id', update);

  // #30
  r.delete('/v1/apps/:app/alerts/:id', (c) => {
    alerts.delete(user(c), c.req.param('app'), c.req.param('id'));
    return c.body(null, 204);
  });
  return r;
}
