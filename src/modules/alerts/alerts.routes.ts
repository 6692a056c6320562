import { type Context } from 'hono';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { parseWith, readJson, wrappedBody } from '../../http/validate.ts';
import { alertEnvelope, alertList, createAlertSchema, updateAlertSchema } from './alerts.schemas.ts';
import { type AlertsService } from './alerts.service.ts';

export function alertsRoutes(deps: { alerts: AlertsService }) {
  const { alerts } = deps;
  const r = new ApiRoutes('alerts');
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/alerts',
      summary: '#26 List the alerts of an app',
      responses: { 200: alertList },
    },
    (c) => c.json({ alerts: alerts.list(user(c), c.get('app').id) }),
  );

  // Wrapped under `alert`, as both official clients send it.
  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/alerts',
      summary: '#27 Create an alert',
      body: createAlertSchema,
      bodyRoot: 'alert',
      responses: { 201: alertEnvelope },
    },
    (c, { body: { alert } }) => c.json({ alert: alerts.create(user(c), c.get('app').id, alert) }, 201),
  );

  r.add(
    { method: 'get', path: '/v1/apps/:app/alerts/:id', summary: '#28 Get an alert', responses: { 200: alertEnvelope } },
    (c, { params }) => c.json({ alert: alerts.show(user(c), c.get('app').id, params.id) }),
  );

  // The npm client wraps the body in `alert`; go-scalingo sends AlertUpdateParams unwrapped
  // (with remind_every as an integer of ns). Both are accepted, on PATCH and PUT.
  r.add(
    {
      method: ['patch', 'put'],
      path: '/v1/apps/:app/alerts/:id',
      summary: '#29 Update an alert',
      description: 'The body may be wrapped in `alert` or not (go-scalingo sends it unwrapped).',
      body: updateAlertSchema,
      rawBody: true,
      responses: { 200: alertEnvelope },
    },
    async (c, { params }) => {
      const { alert } = parseWith(updateAlertSchema, wrappedBody(await readJson(c), 'alert'), 'alert');
      return c.json({ alert: alerts.update(user(c), c.get('app').id, params.id, alert) });
    },
  );

  r.add(
    { method: 'delete', path: '/v1/apps/:app/alerts/:id', summary: '#30 Delete an alert', responses: { 204: null } },
    (c, { params }) => {
      alerts.delete(user(c), c.get('app').id, params.id);
      return c.body(null, 204);
    },
  );
  return r;
}
