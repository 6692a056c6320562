import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { readJson, parseWith } from '../../http/validate.ts';
import { isoDate } from '../../shared/clock.ts';
import type { AuthService } from './auth.service.ts';
import { publicUser } from './auth.service.ts';
import type { TokenRow } from './auth.store.ts';
import type { Urls } from '../../shared/urls.ts';

// The npm client posts {name}; the platform documents {token: {name}}. Both are accepted.
const createTokenSchema = z.object({ name: z.string().trim().min(1, "can't be blank").max(255) });

function tokenJson(t: TokenRow, secretValue?: string) {
  return {
    id: t.id,
    name: t.name,
    created_at: isoDate(t.created_at),
    last_used_at: isoDate(t.last_used_at),
    issued_at: isoDate(t.issued_at),
    ...(secretValue ? { token: secretValue } : {}),
  };
}

export function authRoutes(deps: { auth: AuthService; urls: () => Urls; regionName: string; regionDisplayName: string }) {
  const { auth } = deps;
  const r = new Hono<AppEnv>();

  r.post('/v1/tokens/exchange', async (c) => {
    const header = c.req.header('authorization');
    if (!header || !/^basic\s/i.test(header)) throw ApiError.unauthorized('token exchange needs HTTP basic authentication: empty username, API token as password');
    const decoded = Buffer.from(header.replace(/^basic\s+/i, ''), 'base64').toString('utf8');
    const apiToken = decoded.slice(decoded.indexOf(':') + 1);
    if (!apiToken) throw ApiError.unauthorized('no API token given as password');
    return c.json({ token: await auth.exchange(apiToken) });
  });

  r.post('/v1/tokens', async (c) => {
    const body = (await readJson(c)) as Record<string, unknown>;
    const input = body && typeof body === 'object' && typeof body.token === 'object' && body.token !== null ? body.token : body;
    const { name } = parseWith(createTokenSchema, input);
    const { row, secret } = auth.createToken(c.get('principal').user.id, name);
    return c.json({ token: tokenJson(row, secret) }, 201);
  });

  r.get('/v1/tokens', (c) => c.json({ tokens: auth.listTokens(c.get('principal').user.id).map((t) => tokenJson(t)) }));

  r.patch('/v1/tokens/:id/renew', (c) => {
    const { row, secret } = auth.renewToken(c.get('principal').user.id, c.req.param('id'));
    return c.json({ token: tokenJson(row, secret) });
  });

  r.delete('/v1/tokens/:id', (c) => {
    auth.deleteToken(c.get('principal').user.id, c.req.param('id'));
    return c.body(null, 204);
  });

  r.get('/v1/users/self', (c) => c.json({ user: publicUser(c.get('principal').user) }));

  r.get('/v1/regions', (c) => {
    const u = deps.urls();
    return c.json({
      regions: [
        {
          name: deps.regionName,
          display_name: deps.regionDisplayName,
          api: u.api,
          // The git endpoint's host:port (the platform: ssh.<region>.scalingo.com:22).
          ssh: u.git ? u.git.replace(/^ssh:\/\/git@/, '') : `ssh.${deps.regionName}.localhost:22`,
          dashboard: `${u.api}/_emulator`,
          database_api: `${u.api}/_emulator/databases`,
          default: true,
        },
      ],
    });
  });

  return r;
}
