// Dedicated databases on the platform API (go-scalingo databases_preview.go): POST /v1/databases
// creates one, GET /v1/databases lists them, GET /v1/databases/:id shows one. Their deletion is the
// app's (DELETE /v1/apps/:id?current_name=…), as the clients do it.
import type { Context } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { ApiRoutes } from '../../http/api-routes.ts';
import { parseWith, readJson, wrappedBody } from '../../http/validate.ts';
import { appJson, type AppViewContext } from '../apps/apps.view.ts';
import type { AppRow } from '../apps/apps.store.ts';
import type { DatabasesService } from './databases.service.ts';
import { createDatabaseSchema, databaseNgEnvelope, databaseNgList } from './databases.schemas.ts';

export function databasesRoutes(deps: { databases: DatabasesService; view: AppViewContext }) {
  const { databases } = deps;
  const r = new ApiRoutes('databases');
  const user = (c: Context<AppEnv>) => c.get('principal').user;
  const json = async (c: Context<AppEnv>, app: AppRow) => ({ ...(await databases.ngJson(user(c), app)), app: appJson(app, deps.view) });

  r.add(
    {
      method: 'post',
      path: '/v1/databases',
      summary: 'Create a dedicated database (an app with one database addon on a real server)',
      body: createDatabaseSchema,
      rawBody: true,
      responses: { 201: databaseNgEnvelope },
    },
    async (c) => {
      const { database } = parseWith(createDatabaseSchema, wrappedBody(await readJson(c), 'database'), 'database');
      const app = databases.create(user(c), database);
      return c.json({ database: await json(c, app) }, 201);
    },
  );
  r.add({ method: 'get', path: '/v1/databases', summary: 'List the dedicated databases', responses: { 200: databaseNgList } }, async (c) =>
    c.json({ databases: await Promise.all(databases.list(user(c)).map((a) => json(c, a))) }),
  );
  r.add({ method: 'get', path: '/v1/databases/:id', summary: 'Get a dedicated database by its id or name', responses: { 200: databaseNgEnvelope } }, async (c) =>
    c.json({ database: await json(c, databases.find(user(c), c.req.param('id'))) }),
  );
  return r;
}
