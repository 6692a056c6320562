import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { jsonBody, readJson } from '../../http/validate.ts';
import type { DrainsService } from './drains.service.ts';
import { drainBodySchema } from './drains.schemas.ts';

/** #31–#36: the same three actions on an app and on an addon of the app. */
export function drainsRoutes(deps: { drains: DrainsService }) {
  const { drains } = deps;
  const r = new Hono<AppEnv>();
  const user = (c: Context<AppEnv>) => c.get('principal').user;
  const addonOf = (c: Context<AppEnv>) => c.req.param('addon') as string | undefined;

  const list = (c: Context<AppEnv>) => c.json({ drains: drains.list(user(c), c.req.param('app') as string, addonOf(c)) });
  const add = async (c: Context<AppEnv>) => {
    const { drain } = await jsonBody(c, drainBodySchema, 'drain');
    return c.json({ drain: drains.add(user(c), c.req.param('app') as string, addonOf(c), drain) }, 201);
  };
  // The url comes in the query string (Go client: DELETE params are query params) or a JSON body (spec).
  const remove = async (c: Context<AppEnv>) => {
    let url = c.req.query('url');
    if (!url) {
      const body = (await readJson(c)) as { url?: unknown; drain?: { url?: unknown } } | null;
      const v = body && typeof body === 'object' ? (body.url ?? body.drain?.url) : undefined;
      url = typeof v === 'string' ? v : undefined;
    }
    drains.remove(user(c), c.req.param('app') as string, addonOf(c), url);
    return c.body(null, 204);
  };

  r.get('/v1/apps/:app/log_drains', list);
  r.post('/v1/apps/:app/log_drains', add);
  r.delete('/v1/apps/:app/log_drains', remove);
  r.get('/v1/apps/:app/addons/:addon/log_drains', list);
  r.post('/v1/apps/:app/addons/:addon/log_drains', add);
  r.delete('/v1/apps/:app/addons/:addon/log_drains', remove);
  return r;
}
