import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.ts';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';

const basicUser = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

describe('auth service', () => {
  let h: Harness;
  const clock = new ManualClock(Date.parse('2026-01-01T10:00:00Z'));
  beforeAll(async () => {
    h = await startEmulator({}, { clock });
  });
  afterAll(() => h.stop());

  it('creates an API token with username+password, shows the secret once, lists without secrets', async () => {
    const created = await h.call('POST', '/v1/tokens', {
      as: null,
      headers: { authorization: basicUser('dev', 'dev-password') },
      body: { token: { name: 'laptop' } },
    });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatchObject({ name: 'laptop', last_used_at: null });
    expect(created.body.token.token).toMatch(/^tk-us-/);
    expect(created.body.token.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const list = await h.call('GET', '/v1/tokens', {
      as: null,
      headers: { authorization: basicUser('dev@example.test', 'dev-password') },
    });
    expect(list.status).toBe(200);
    const mine = list.body.tokens.find((t: { id: string }) => t.id === created.body.token.id);
    expect(mine).toMatchObject({ name: 'laptop' });
    expect(JSON.stringify(list.body)).not.toContain(created.body.token.token);

    // The new secret works for the API.
    const apps = await h.call('GET', '/v1/apps', {
      as: null,
      headers: { authorization: `Basic ${Buffer.from(`:${created.body.token.token}`).toString('base64')}` },
    });
    expect(apps.status).toBe(200);
  });

  it('accepts the npm client form {name} with a bearer', async () => {
    const bearer = await h.bearer();
    const res = await h.call('POST', '/v1/tokens', { as: { bearer }, body: { name: 'from-npm' } });
    expect(res.status).toBe(201);
    expect(res.body.token.name).toBe('from-npm');
  });

  it('stores tokens hashed: no secret in the database', async () => {
    const res = await h.call('POST', '/v1/tokens', { body: { name: 'hashed' } });
    const secret = res.body.token.token as string;
    const rows = h.emu.db.prepare('SELECT * FROM api_tokens').all();
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(JSON.stringify(rows)).not.toContain(TOKENS.dev);
  });

  it('refuses token creation with bad credentials or a blank name', async () => {
    const bad = await h.call('POST', '/v1/tokens', {
      as: null,
      headers: { authorization: basicUser('dev', 'wrong') },
      body: { token: { name: 'x' } },
    });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toBeTruthy();
    const unknown = await h.call('POST', '/v1/tokens', {
      as: null,
      headers: { authorization: basicUser('nobody', 'x') },
      body: { token: { name: 'x' } },
    });
    expect(unknown.status).toBe(401);
    const blank = await h.call('POST', '/v1/tokens', { body: { token: { name: '  ' } } });
    expect(blank.status).toBe(422);
    expect(blank.body).toEqual({ errors: { name: ["can't be blank"] } });
    const missing = await h.call('POST', '/v1/tokens', { body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.name).toEqual(['missing field']);
  });

  it('exchanges an API token for a signed JWT bearer valid one hour', async () => {
    const res = await h.call('POST', '/v1/tokens/exchange', { as: 'dev', body: {} });
    expect(res.status).toBe(200);
    const claims = decodeJwt(res.body.token);
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(claims.exp).toBe(Math.floor(clock.now() / 1000) + 3600);
    const self = await h.call('GET', '/v1/users/self', { as: { bearer: res.body.token } });
    expect(self.status).toBe(200);
    expect(self.body.user).toMatchObject({ username: 'dev', email: 'dev@example.test', fullname: 'Dev', flags: {} });
    expect(self.body.user.id).toMatch(/^us-/);
  });

  it('refuses exchange without basic auth or with an unknown token', async () => {
    expect((await h.call('POST', '/v1/tokens/exchange', { as: null })).status).toBe(401);
    expect(
      (
        await h.call('POST', '/v1/tokens/exchange', {
          as: null,
          headers: { authorization: basicUser('', 'tk-us-nope') },
        })
      ).status,
    ).toBe(401);
    expect(
      (await h.call('POST', '/v1/tokens/exchange', { as: null, headers: { authorization: 'Bearer abc' } })).status,
    ).toBe(401);
  });

  it('401 for missing, malformed, forged and expired bearers', async () => {
    const missing = await h.call('GET', '/v1/apps', { as: null });
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: expect.stringMatching(/no authentication/) });
    expect((await h.call('GET', '/v1/apps', { as: { bearer: 'not-a-jwt' } })).status).toBe(401);
    expect((await h.call('GET', '/v1/apps', { as: null, headers: { authorization: 'Token abc' } })).status).toBe(401);
    // A JWT signed with another key.
    const { SignJWT } = await import('jose');
    const forged = await new SignJWT({ tid: 'x' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('us-x')
      .setIssuer('scalingo-emulator')
      .setExpirationTime('1h')
      .sign(new Uint8Array(32));
    expect((await h.call('GET', '/v1/apps', { as: { bearer: forged } })).status).toBe(401);

    const bearer = await h.bearer();
    expect((await h.call('GET', '/v1/apps', { as: { bearer } })).status).toBe(200);
    clock.advance(3601_000);
    const expired = await h.call('GET', '/v1/apps', { as: { bearer } });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toMatch(/expired/);
  });

  it('serves a verified bearer from its cache only for the exact header, until it expires', async () => {
    const bearer = await h.bearer();
    expect(h.emu.area('accounts').auth.cachedPrincipal(`Bearer ${bearer}`)).toBeUndefined();
    const verified = await h.emu.area('accounts').auth.authenticate(`Bearer ${bearer}`);
    expect(h.emu.area('accounts').auth.cachedPrincipal(`Bearer ${bearer}`)).toBe(verified);
    // Other spellings go through the full check, which still accepts them.
    for (const header of [`bearer ${bearer}`, `Bearer  ${bearer}`, ` Bearer ${bearer}`]) {
      expect(h.emu.area('accounts').auth.cachedPrincipal(header)).toBeUndefined();
      expect((await h.emu.area('accounts').auth.authenticate(header)).user.id).toBe(verified.user.id);
    }
    expect(h.emu.area('accounts').auth.cachedPrincipal(undefined)).toBeUndefined();
    // The cache is keyed by the signature: another bearer ending with the same one (its payload changed), or the
    // same bearer behind another scheme of the same length, is not the verified bearer.
    const [head, payload, signature] = bearer.split('.');
    const tampered = `${head}.${payload.slice(0, -2)}${payload.endsWith('A') ? 'B' : 'A'}${payload.slice(-1)}.${signature}`;
    for (const header of [`Bearer ${tampered}`, `Basic: ${bearer}`, `Bearer x${bearer}`, `Bearer ${signature}`])
      expect(h.emu.area('accounts').auth.cachedPrincipal(header), header).toBeUndefined();
    await expect(h.emu.area('accounts').auth.authenticate(`Bearer ${tampered}`)).rejects.toThrow(/invalid bearer/);
    expect(h.emu.area('accounts').auth.cachedPrincipal(`Bearer ${bearer}`)).toBe(verified);
    clock.advance(3601_000);
    expect(h.emu.area('accounts').auth.cachedPrincipal(`Bearer ${bearer}`)).toBeUndefined();
    await expect(h.emu.area('accounts').auth.authenticate(`Bearer ${bearer}`)).rejects.toThrow(/expired/);
  });

  it('revoking an API token revokes the bearers made from it', async () => {
    const created = await h.call('POST', '/v1/tokens', { body: { token: { name: 'short-lived' } } });
    const bearer = await h.bearer(created.body.token.token);
    expect((await h.call('GET', '/v1/apps', { as: { bearer } })).status).toBe(200);
    expect((await h.call('DELETE', `/v1/tokens/${created.body.token.id}`)).status).toBe(204);
    expect((await h.call('GET', '/v1/apps', { as: { bearer } })).status).toBe(401);
    expect(
      (
        await h.call('POST', '/v1/tokens/exchange', {
          as: null,
          headers: { authorization: basicUser('', created.body.token.token) },
        })
      ).status,
    ).toBe(401);
    // Deleting it again, or someone else's token → 404.
    expect((await h.call('DELETE', `/v1/tokens/${created.body.token.id}`)).body).toEqual({
      resource: 'token',
      error: 'not found',
    });
    const others = await h.call('GET', '/v1/tokens', { as: 'other' });
    expect((await h.call('DELETE', `/v1/tokens/${others.body.tokens[0].id}`)).status).toBe(404);
  });

  it('renews a token: new secret, old one refused', async () => {
    const created = await h.call('POST', '/v1/tokens', { body: { token: { name: 'renew-me' } } });
    const renewed = await h.call('PATCH', `/v1/tokens/${created.body.token.id}/renew`, { body: {} });
    expect(renewed.status).toBe(200);
    expect(renewed.body.token.token).not.toBe(created.body.token.token);
    expect(
      (
        await h.call('POST', '/v1/tokens/exchange', {
          as: null,
          headers: { authorization: basicUser('', created.body.token.token) },
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await h.call('POST', '/v1/tokens/exchange', {
          as: null,
          headers: { authorization: basicUser('', renewed.body.token.token) },
        })
      ).status,
    ).toBe(200);
  });

  it('describes the emulated region', async () => {
    const res = await h.call('GET', '/v1/regions');
    expect(res.status).toBe(200);
    expect(res.body.regions).toEqual([
      expect.objectContaining({
        name: 'local',
        display_name: 'Local emulator',
        api: h.api,
        default: true,
        ssh: expect.any(String),
        dashboard: expect.any(String),
        database_api: expect.any(String),
      }),
    ]);
  });

  it('rejects basic auth with a username on API routes (only API tokens there)', async () => {
    const res = await h.call('GET', '/v1/apps', {
      as: null,
      headers: { authorization: basicUser('dev', 'dev-password') },
    });
    expect(res.status).toBe(401);
  });
});
