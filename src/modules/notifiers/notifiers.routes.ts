import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { parseWith, readJson } from '../../http/validate.ts';
import type { NotifiersService } from './notifiers.service.ts';
import { createNotifierSchema, updateNotifierSchema } from './notifiers.schemas.ts';
import { PLATFORMS, platformJson } from './platforms.ts';

/** A body under `{root: {...}}` as the clients send it, or the same fields unwrapped (curl users, the Go CLI's alert update). */
export function wrapped(raw: unknown, root: string): unknown {
  if (raw && typeof raw === 'object' && !Array.isArray(raw) && root in raw) return raw;
  return { [root]: raw };
}

export function notifiersRoutes(deps: { notifiers: NotifiersService }) {
  const { notifiers } = deps;
  const r = new Hono<AppEnv>();
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  // Public on the platform (go-scalingo sends these with NoAuth): see src/http/middleware/authenticate.ts.
  r.get('/v1/notification_platforms', (c) => c.json({ notification_platforms: PLATFORMS.map(platformJson) }));
  r.get('/v1/notification_platforms/search', (c) => {
    const name = (c.req.query('name') ?? '').toLowerCase();
    return c.json({ notification_platforms: PLATFORMS.filter((p) => p.name === name).map(platformJson) });
  });

  r.get('/v1/apps/:app/notifiers', (c) => c.json({ notifiers: notifiers.list(user(c), c.req.param('app')) }));
  r.post('/v1/apps/:app/notifiers', async (c) => {
    const { notifier } = parseWith(createNotifierSchema, wrapped(await readJson(c), 'notifier'), 'notifier');
    return c.json({ notifier: notifiers.create(user(c), c.req.param('app'), notifier) }, 201);
  });
  r.get('/v1/apps/:app/notifiers/:id', (c) => c.json({ notifier: notifiers.show(user(c), c.req.param('app'), c.req.param('id')) }));
  const update = async (c: Context<AppEnv, '/v1/apps/:app/notifiers/:id'>) => {
    const { notifier } = parseWith(updateNotifierSchema, wrapped(await readJson(c), 'notifier'), 'notifier');
    return c.json({ notifier: notifiers.update(user(c), c.req.param('app'), c.req.param('id'), notifier) });
  };
  r.patch('/v1/apps/:app/notifiers/:id', update);
  r.put('/v1/apps/:app/notifiers/:id', update);
  r.delete('/v1/apps/:app/notifiers/:id', (c) => {
    notifiers.delete(user(c), c.req.param('app'), c.req.param('id'));
    return c.body(null, 204);
  });
  r.post('/v1/apps/:app/notifiers/:id/test', (c) => {
    notifiers.test(user(c), c.req.param('app'), c.req.param('id'));
    return c.json({});
  });
  return r;
}
