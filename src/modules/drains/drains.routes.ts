import { type Context } from 'hono';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { readJson } from '../../http/validate.ts';
import {
  type DrainInput,
  drainBodySchema,
  drainEnvelope,
  drainList,
  removeDrainBody,
  removeDrainQuery,
} from './drains.schemas.ts';
import { type DrainsService } from './drains.service.ts';

/** #31–#36: the same three actions on an app and on an addon of the app. */
export function drainsRoutes(deps: { drains: DrainsService }) {
  const { drains } = deps;
  const r = new ApiRoutes('drains');
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  const list = (c: Context<AppEnv>, app: string, addon?: string) =>
    c.json({ drains: drains.list(user(c), app, addon) });
  const add = (c: Context<AppEnv>, app: string, addon: string | undefined, drain: DrainInput) =>
    c.json({ drain: drains.add(user(c), app, addon, drain) }, 201);
  // The url comes in the query string (Go client: DELETE params are query params) or a JSON body (spec).
  const remove = async (c: Context<AppEnv>, query: { url?: string }, app: string, addon?: string) => {
    let url = query.url;
    if (!url) {
      const body = (await readJson(c)) as { url?: unknown; drain?: { url?: unknown } } | null;
      const v = body && typeof body === 'object' ? (body.url ?? body.drain?.url) : undefined;
      url = typeof v === 'string' ? v : undefined;
    }
    drains.remove(user(c), app, addon, url);
    return c.body(null, 204);
  };

  const app = '/v1/apps/:app/log_drains';
  r.add(
    { method: 'get', path: app, summary: '#31 List the log drains of an app', responses: { 200: drainList } },
    (c) => list(c, c.get('app').id),
  );
  r.add(
    {
      method: 'post',
      path: app,
      summary: '#33 Add a log drain to an app',
      body: drainBodySchema,
      bodyRoot: 'drain',
      responses: { 201: drainEnvelope },
    },
    (c, { body: { drain } }) => add(c, c.get('app').id, undefined, drain),
  );
  r.add(
    {
      method: 'delete',
      path: app,
      summary: '#35 Remove a log drain of an app (by url)',
      query: removeDrainQuery,
      body: removeDrainBody,
      rawBody: true,
      responses: { 204: null },
    },
    (c, { query }) => remove(c, query, c.get('app').id),
  );

  const addon = '/v1/apps/:app/addons/:addon/log_drains';
  r.add(
    { method: 'get', path: addon, summary: '#32 List the log drains of an addon', responses: { 200: drainList } },
    (c, { params }) => list(c, c.get('app').id, params.addon),
  );
  r.add(
    {
      method: 'post',
      path: addon,
      summary: '#34 Add a log drain to an addon',
      body: drainBodySchema,
      bodyRoot: 'drain',
      responses: { 201: drainEnvelope },
    },
    (c, { params, body: { drain } }) => add(c, c.get('app').id, params.addon, drain),
  );
  r.add(
    {
      method: 'delete',
      path: addon,
      summary: '#36 Remove a log drain of an addon (by url)',
      query: removeDrainQuery,
      body: removeDrainBody,
      rawBody: true,
      responses: { 204: null },
    },
    (c, { params, query }) => remove(c, query, c.get('app').id, params.addon),
  );
  return r;
}
