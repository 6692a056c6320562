// Dedicated databases on the platform API (go-scalingo databases_preview.go): POST /v1/databases
// creates one, GET /v1/databases lists them, GET /v1/databases/:id shows one. Their deletion is the
// app's (DELETE /v1/apps/:id?current_name=…), as the clients do it.
import { type Context } from 'hono';
import { z } from 'zod';
import { ApiRoutes } from '../../http/api-routes.ts';
import { ERROR_BODY } from '../../http/api-schemas.ts';
import { type AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { parseWith, readJson, wrappedBody } from '../../http/validate.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type AppViewContext, appJson } from '../apps/apps.view.ts';
import { createDatabaseSchema, databaseNgEnvelope, databaseNgList } from './databases.schemas.ts';
import { type DatabasesService } from './databases.service.ts';

const endpointList = z.object({
  endpoints: z.array(
    z.object({ id: z.string(), database_id: z.string(), hostname: z.string(), port: z.number(), type: z.string() }),
  ),
});
const networkConfiguration = z.object({
  network_configuration: z.object({
    outscale_account_id: z.string(),
    outscale_net_id: z.string(),
    ip_range: z.string(),
  }),
});

export function databasesRoutes(deps: { databases: DatabasesService; view: AppViewContext }) {
  const { databases } = deps;
  const r = new ApiRoutes('databases');
  const user = (c: Context<AppEnv>) => c.get('principal').user;
  const json = async (c: Context<AppEnv>, app: AppRow) => ({
    ...(await databases.ngJson(user(c), app)),
    app: appJson(app, deps.view),
  });

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
      const { database } = parseWith(createDatabaseSchema(), wrappedBody(await readJson(c), 'database'), 'database');
      const app = databases.create(user(c), database);
      return c.json({ database: await json(c, app) }, 201);
    },
  );
  r.add(
    {
      method: 'get',
      path: '/v1/databases',
      summary: 'List the dedicated databases',
      responses: { 200: databaseNgList },
    },
    async (c) => c.json({ databases: await Promise.all(databases.list(user(c)).map((a) => json(c, a))) }),
  );
  r.add(
    {
      method: 'get',
      path: '/v1/databases/:id',
      summary: 'Get a dedicated database by its id or name',
      responses: { 200: databaseNgEnvelope },
    },
    async (c, { params }) => c.json({ database: await json(c, databases.find(user(c), params.id)) }),
  );

  // Networking (go-scalingo v11 databases_networking.go, CLI `database-endpoints`, `database-net-peerings*`,
  // `database-network-configuration`): the local server is reached on its
  // published port; there are no Outscale nets to peer with, so peerings are none and cannot be made.
  r.add(
    {
      method: 'get',
      path: '/v1/databases/:id/endpoints',
      summary: 'The endpoints of a dedicated database (its published port)',
      responses: { 200: endpointList },
    },
    async (c, { params }) =>
      c.json({ endpoints: await databases.endpoints(user(c), databases.find(user(c), params.id)) }),
  );
  r.add(
    {
      method: 'get',
      path: '/v1/databases/:id/net_peerings',
      summary: 'Net peerings of a dedicated database (none locally)',
      responses: { 200: z.object({ net_peerings: z.array(z.object({ id: z.string() })) }) },
    },
    (c, { params }) => {
      databases.find(user(c), params.id);
      return c.json({ net_peerings: [] });
    },
  );
  r.add(
    {
      method: 'post',
      path: '/v1/databases/:id/net_peerings',
      summary: 'Make a net peering (refused: no Outscale net locally)',
      responses: { 400: ERROR_BODY },
    },
    (c, { params }) => {
      databases.find(user(c), params.id);
      throw ApiError.badRequest(
        'net peerings link an Outscale net to the database: the Scalingo emulator has none; reach the database on its ' +
          'endpoint (GET /v1/databases/:id/endpoints)',
      );
    },
  );
  r.add(
    {
      method: ['get', 'delete'],
      path: '/v1/databases/:id/net_peerings/:peering',
      summary: 'A net peering (none locally)',
      responses: { 404: ERROR_BODY },
    },
    (c, { params }) => {
      databases.find(user(c), params.id);
      throw ApiError.notFound('net_peering');
    },
  );
  r.add(
    {
      method: 'get',
      path: '/v1/databases/:id/network_configuration',
      summary: 'The network configuration of a dedicated database (no Outscale net)',
      responses: { 200: networkConfiguration },
    },
    (c, { params }) => {
      databases.find(user(c), params.id);
      return c.json({ network_configuration: { outscale_account_id: '', outscale_net_id: '', ip_range: '' } });
    },
  );
  return r;
}
