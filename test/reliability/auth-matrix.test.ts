import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.ts';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';

// Every route of the app (from app.routes), asked the way an attacker would: without credentials,
// and with bearers that are malformed, unsigned (`alg: none`), signed with another key, or expired.
// Only the documented public routes answer; everything else is a 401 JSON before anything else
// (no 404, 415 or 413 that would tell what exists). Another user's app is a 404, never a 403.

// Public by design (docs/fidelity.md): the exchange (its own basic scheme), the catalogues the npm
// client fetches without credentials, the emulator's own pages.
const PUBLIC = new Set([
  'GET /v1/event_categories',
  'GET /v1/event_types',
  'GET /v1/features/container_sizes',
  'GET /v1/notification_platforms',
  'GET /v1/notification_platforms/search',
  'GET /_emulator/health',
  'GET /_emulator/billing',
  'GET /_emulator/openapi.json',
  'GET /v1/addon_providers',
  'GET /v1/addon_providers/:id/plans',
  // The dashboard's page, script and stylesheet: no data in them, loopback only; the page trades the admin token
  // for a bearer at an admin route (README "Dashboard").
  'GET /_emulator/',
  'GET /_emulator/app.js',
  'GET /_emulator/style.css',
]);
// Public redirects: /_emulator → /_emulator/ (the dashboard's page).
const PUBLIC_REDIRECTS = new Set(['GET /_emulator']);
// Routes whose credential is a signed URL (no Authorization header is read): refused without it.
// (the platform's presigned-URL answer for sources and archives is 403, as S3's).
const SIGNED_URL_STATUS: Record<string, number> = {
  'GET /apps/:app/logs': 401,
  'GET /apps/:app/logs_archives/:id': 403,
  'GET /sources/:id': 403,
  'PUT /sources/:id': 403,
};

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe('authentication on every route', () => {
  let h: Harness;
  const clock = new ManualClock();
  let routes: { method: string; path: string }[];
  let bearers: Record<string, string>;
  let appId: string;

  beforeAll(async () => {
    // Hundreds of wrong admin tokens go to the control plane here: their rate limit (60 a minute, control-plane.test.ts) is raised.
    h = await startEmulator({ rateLimit: { perMinute: 100_000 } }, { runtime: new FakeLogsRuntime(), clock });
    const seen = new Map<string, { method: string; path: string }>();
    for (const r of h.emu.app.routes)
      if (r.method !== 'ALL' && !r.path.includes('*'))
        seen.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
    routes = [...seen.values()];
    appId = (await h.call('POST', '/v1/apps', { body: { app: { name: 'matrix-app' } } })).body.app.id;

    const real = await h.bearer();
    const [header, payload] = real.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const expiring = await h.bearer();
    bearers = {
      'malformed bearer': 'not-a-jwt',
      'malformed JWT (bad base64/JSON)': `${header}.%%%.sig`,
      'alg: none': `${b64url({ alg: 'none', typ: 'JWT' })}.${payload}.`,
      'alg: none, no signature part': `${b64url({ alg: 'none', typ: 'JWT' })}.${payload}`,
      'wrongly signed': await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .sign(randomBytes(32)),
      'signature of another token': `${header}.${payload}.${real.split('.')[2].split('').reverse().join('')}`,
      expired: expiring,
    };
    // The clock moves past the bearer lifetime: `expiring` is now expired (API tokens do not expire).
    clock.advance((h.emu.config.auth.bearerTtlSeconds + 3600) * 1000);
  });
  afterAll(() => h?.stop());

  const concrete = (path: string) =>
    path
      .replace(':app', 'matrix-app')
      .replace(':token', `${'0'.repeat(24)}.9999999999.${'A'.repeat(43)}`)
      .replace(/:(\w+)/g, 'x1');
  // A body that would be refused for its type and size if it were read: auth must come first.
  const hostileBody = { body: `<xml>${'x'.repeat(1024 * 1024 + 10)}</xml>`, type: 'application/xml' };

  async function ask(method: string, path: string, authorization: string | null) {
    const headers: Record<string, string> = {};
    if (authorization) headers.authorization = authorization;
    const withBody = !['GET', 'HEAD'].includes(method);
    if (withBody) headers['content-type'] = hostileBody.type;
    const res = await h.emu.app.request(path, { method, headers, body: withBody ? hostileBody.body : undefined });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.status, type: res.headers.get('content-type') ?? '', json };
  }

  it('without credentials and with every kind of bad bearer: 401 JSON on every non-public route, before 404/413/415', async () => {
    const wrong: string[] = [];
    let checked = 0;
    const cases: [string, string | null][] = [
      ['no credentials', null],
      ['empty Authorization', ''],
      ['Basic with a wrong token', `Basic ${Buffer.from(':tk-us-forged').toString('base64')}`],
      ...Object.entries(bearers).map(([k, v]) => [k, `Bearer ${v}`] as [string, string]),
    ];
    for (const r of routes) {
      const key = `${r.method} ${r.path}`;
      if (PUBLIC.has(key) || PUBLIC_REDIRECTS.has(key)) continue;
      for (const [name, auth] of cases) {
        const res = await ask(r.method, concrete(r.path), auth);
        checked++;
        const expected = SIGNED_URL_STATUS[key] ?? 401;
        const ok =
          res.status === expected &&
          res.type.startsWith('application/json') &&
          typeof (res.json as { error?: unknown })?.error === 'string';
        if (!ok) wrong.push(`${key} [${name}] → ${res.status} ${JSON.stringify(res.json)?.slice(0, 120)}`);
      }
    }
    console.log(
      `auth matrix: ${routes.length} routes, ${checked} refused requests checked, ${PUBLIC.size} public routes`,
    );
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(500);
  });

  it('the documented public routes answer without credentials, and the valid credentials still work', async () => {
    for (const key of PUBLIC) {
      const [method, path] = key.split(' ');
      expect((await ask(method, path.replace(':id', 'scalingo-postgresql'), null)).status, key).toBe(200);
    }
    expect(
      (await ask('GET', '/v1/apps/matrix-app', `Basic ${Buffer.from(`:${TOKENS.dev}`).toString('base64')}`)).status,
    ).toBe(200);
    expect((await ask('GET', '/v1/apps/matrix-app', `Bearer ${await h.bearer()}`)).status).toBe(200);
  });

  it("another user's app is a 404 {resource: app} on every app route, by name and by id", async () => {
    const wrong: string[] = [];
    const other = `Basic ${Buffer.from(`:${TOKENS.other}`).toString('base64')}`;
    for (const r of routes.filter((x) => x.path.startsWith('/v1/apps/:app'))) {
      for (const key of ['matrix-app', appId]) {
        const path = r.path.replace(':app', key).replace(/:(\w+)/g, 'x1');
        const headers: Record<string, string> = { authorization: other };
        const withBody = !['GET', 'HEAD'].includes(r.method);
        if (withBody) headers['content-type'] = 'application/json';
        const res = await h.emu.app.request(path, { method: r.method, headers, body: withBody ? '{}' : undefined });
        const json = (await res.json().catch(() => null)) as { resource?: string } | null;
        if (res.status !== 404 || json?.resource !== 'app')
          wrong.push(
            `${r.method} ${r.path} (${key === appId ? 'id' : 'name'}) → ${res.status} ${JSON.stringify(json)}`,
          );
      }
    }
    expect(wrong).toEqual([]);
    // And the owner still reaches it.
    expect((await h.call('GET', '/v1/apps/matrix-app')).status).toBe(200);
  });
});
