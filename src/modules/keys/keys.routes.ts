import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.ts';
import { jsonBody } from '../../http/validate.ts';
import type { KeysService } from './keys.service.ts';

const addSchema = z.object({
  key: z.object({
    name: z.string().trim().min(1, "can't be blank").max(100, 'is too long (maximum is 100 characters)'),
    content: z.string().min(1, "can't be blank").max(16_384, 'is too long for an SSH public key'),
  }),
});

/**
 * `/v1/keys` on the auth service (go-scalingo keys.go: AuthAPI list, add → 201, delete → 204;
 * the CLI's keys, keys-add, keys-remove). The emulator's one port serves the auth service too.
 */
export function keysRoutes(deps: { keys: KeysService }) {
  const r = new Hono<AppEnv>();
  const user = (c: { get(k: 'principal'): AppEnv['Variables']['principal'] }) => c.get('principal').user;

  r.get('/v1/keys', (c) => c.json({ keys: deps.keys.list(user(c)).map(deps.keys.toJson) }));

  r.post('/v1/keys', async (c) => {
    const { key } = await jsonBody(c, addSchema, 'key');
    const row = await deps.keys.add(user(c), key);
    return c.json({ key: deps.keys.toJson(row) }, 201);
  });

  r.get('/v1/keys/:id', (c) => c.json({ key: deps.keys.toJson(deps.keys.get(user(c), c.req.param('id'))) }));

  r.delete('/v1/keys/:id', (c) => {
    deps.keys.remove(user(c), c.req.param('id'));
    return c.body(null, 204);
  });

  return r;
}
