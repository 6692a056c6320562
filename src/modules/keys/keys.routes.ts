import { type Context } from 'hono';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { addKeySchema, keyEnvelope, keyList } from './keys.schemas.ts';
import { type KeysService } from './keys.service.ts';

/**
 * `/v1/keys` on the auth service (go-scalingo keys.go: AuthAPI list, add → 201, delete → 204;
 * the CLI's keys, keys-add, keys-remove). The emulator's one port serves the auth service too.
 */
export function keysRoutes(deps: { keys: KeysService }) {
  const r = new ApiRoutes('keys');
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  r.add({ method: 'get', path: '/v1/keys', summary: 'List SSH keys', responses: { 200: keyList } }, (c) =>
    c.json({ keys: deps.keys.list(user(c)).map(deps.keys.toJson) }),
  );

  r.add(
    {
      method: 'post',
      path: '/v1/keys',
      summary: 'Add an SSH public key',
      body: addKeySchema,
      bodyRoot: 'key',
      responses: { 201: keyEnvelope },
    },
    async (c, { body: { key } }) => {
      const row = await deps.keys.add(user(c), key);
      return c.json({ key: deps.keys.toJson(row) }, 201);
    },
  );

  r.add(
    { method: 'get', path: '/v1/keys/:id', summary: 'Get an SSH key', responses: { 200: keyEnvelope } },
    (c, { params }) => c.json({ key: deps.keys.toJson(deps.keys.get(user(c), params.id)) }),
  );

  r.add(
    { method: 'delete', path: '/v1/keys/:id', summary: 'Remove an SSH key', responses: { 204: null } },
    (c, { params }) => {
      deps.keys.remove(user(c), params.id);
      return c.body(null, 204);
    },
  );

  return r;
}
