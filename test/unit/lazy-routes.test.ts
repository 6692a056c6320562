import { readdirSync, readFileSync } from 'node:fs';
import { type MiddlewareHandler } from 'hono';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MANIFEST, manifestSource } from '../../scripts/routes-manifest.ts';
import { ApiRoutes } from '../../src/http/api-routes.ts';
import { type AppEnv } from '../../src/http/env.ts';
import { ApiError } from '../../src/http/errors.ts';
import { LazyRoutes, manifestEntry } from '../../src/wiring/lazy-routes.ts';
import { type ManifestRoute } from '../../src/wiring/routes-manifest.ts';
import { startEmulator } from '../harness.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { smallHttpApp } from '../support/small-http-app.ts';

// The lazy route groups (src/wiring/lazy-routes.ts) on a small app of their own, then in the emulator.
const apps = new Map([
  ['mine', { id: 'ap-1', name: 'mine', locked: false }],
  ['locked', { id: 'ap-2', name: 'locked', locked: true }],
]);

/** A route middleware as hono's are written: it awaits next() and returns nothing. */
const refuseLocked: MiddlewareHandler<AppEnv> = async (c, next) => {
  if ((c.get('app') as unknown as { locked: boolean }).locked) throw ApiError.forbidden('the app is locked');
  await next();
};

/** The routes file of the test: a body, a query, :app loading, a route middleware that awaits next(). */
function thingsRoutes(): ApiRoutes {
  const r = new ApiRoutes('things');
  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/things',
      summary: 'list',
      query: z.object({ n: z.coerce.number().int() }),
      responses: { 200: z.object({ app: z.string(), n: z.number().optional() }) },
    },
    (c, { query: q }) => c.json({ app: c.get('app').name, n: q.n }),
  );
  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/things',
      summary: 'create',
      body: z.object({ thing: z.object({ size: z.number() }) }),
      bodyRoot: 'thing',
      middleware: [refuseLocked],
      responses: { 201: z.object({ app: z.string(), size: z.number() }) },
    },
    (c, { body }) => c.json({ app: c.get('app').name, size: body.thing.size }, 201),
  );
  r.add(
    { method: ['patch', 'put'], path: '/v1/open/:id', summary: 'public', auth: 'public', responses: { 204: null } },
    (c) => c.body(null, 204),
  );
  return r;
}

const MANIFEST_OF_TEST: Record<string, readonly ManifestRoute[]> = {
  thingsRoutes: thingsRoutes().declared.map(manifestEntry),
};

const appWith = (routes: ApiRoutes[]) => smallHttpApp(routes, apps);

function lazyThings(manifest = MANIFEST_OF_TEST) {
  const loads = { count: 0 };
  const group = new LazyRoutes(
    'thingsRoutes',
    async () => {
      loads.count++;
      await new Promise((r) => setTimeout(r, 5)); // an import takes a while: concurrent first hits overlap
      return thingsRoutes();
    },
    manifest,
  );
  return { group, loads, app: appWith([group]) };
}

type Req = [method: string, path: string, body?: string, auth?: string | null];
const REQUESTS: Req[] = [
  ['GET', '/v1/apps/mine/things?n=3'],
  ['GET', '/v1/apps/mine/things?n=x'],
  ['GET', '/v1/apps/theirs/things?n=3'],
  ['POST', '/v1/apps/mine/things', '{"thing":{"size":2}}'],
  ['POST', '/v1/apps/mine/things', '{"thing":{"size":"big"}}'],
  ['POST', '/v1/apps/mine/things', '{"other":{}}'],
  ['POST', '/v1/apps/mine/things', '{not json'],
  ['POST', '/v1/apps/locked/things', '{"thing":{"size":2}}'],
  ['PUT', '/v1/open/1', undefined, null],
  ['PATCH', '/v1/open/1', undefined, null],
  ['DELETE', '/v1/apps/mine/things'],
  ['GET', '/v1/apps/mine/things', undefined, null],
];

async function answer(app: ReturnType<typeof appWith>, [method, path, body, authz]: Req) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authz !== null) headers.authorization = authz ?? 'Bearer ok';
  const res = await app.request(path, { method, body, headers });
  const text = await res.text();
  // The request id differs from request to request; nothing else may.
  return { status: res.status, text: text.replace(/request id [0-9a-f-]+/, 'request id …') };
}

describe('a lazy route group', () => {
  it('answers every request, first ones included, exactly as the same group built at start', async () => {
    const eager = appWith([thingsRoutes()]);
    for (const req of REQUESTS) {
      const { app } = lazyThings(); // a new lazy group each time: this request is its first
      const first = await answer(app, req);
      expect(first, req.join(' ')).toEqual(await answer(eager, req));
      expect(await answer(app, req), req.join(' ')).toEqual(first);
    }
  });

  it('is built once, at the first authenticated request that reaches one of its routes', async () => {
    const { app, loads, group } = lazyThings();
    expect((await answer(app, ['GET', '/v1/apps/mine/things', undefined, null])).status).toBe(401);
    expect((await answer(app, ['GET', '/v1/apps/mine/things', undefined, 'Bearer wrong'])).status).toBe(401);
    expect((await answer(app, ['GET', '/v1/elsewhere'])).status).toBe(404);
    expect(loads.count).toBe(0);
    expect(group.declared[0].built).toBeTypeOf('function');
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => answer(app, ['GET', '/v1/apps/mine/things?n=1'])),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(loads.count).toBe(1);
    await answer(app, ['POST', '/v1/apps/mine/things', '{"thing":{"size":1}}']);
    expect(loads.count).toBe(1);
    // Its stand-in declarations now are the real ones (what the OpenAPI document reads).
    expect(group.declared[1].def.body).toBeInstanceOf(z.ZodType);
    expect(group.declared[0].built).toBeUndefined();
  });

  it('that differs from its manifest answers a 500 {error} with the request id, no stack, and is tried again', async () => {
    const stale = { thingsRoutes: MANIFEST_OF_TEST.thingsRoutes.map(([m, p, a]) => [m, p, a, 'old'] as ManifestRoute) };
    const { app, loads } = lazyThings(stale);
    for (const n of [1, 2]) {
      const res = await app.request('/v1/apps/mine/things', { headers: { authorization: 'Bearer ok' } });
      expect(res.status).toBe(500);
      const body = await res.json();
      expect(Object.keys(body)).toEqual(['error']);
      expect(body.error).toMatch(/^internal error, request id [0-9a-f-]+$/);
      expect(loads.count).toBe(n);
    }
  });

  it('refuses at start a route that checks its own credentials', () => {
    for (const auth of ['admin', 'signed', 'addon'] as const) {
      const manifest = { x: [[['get'], '/_emulator/x', auth, 'x']] as ManifestRoute[] };
      expect(() => new LazyRoutes('x', async () => thingsRoutes(), manifest)).toThrow(/checks its own credentials/);
    }
  });
});

describe('the routes manifest (src/wiring/routes-manifest.ts)', () => {
  it('is what npm run routes:manifest writes from the route groups', async () => {
    expect(readFileSync(MANIFEST, 'utf8')).toBe(await manifestSource());
  }, 30_000);
});

describe('the emulator with its lazy route groups', () => {
  it('serves the same OpenAPI document whether areas were built before it or not', async () => {
    const fresh = await startEmulator({}, { runtime: new FakeLogsRuntime() });
    const used = await startEmulator({}, { runtime: new FakeLogsRuntime() });
    try {
      // Areas built in an order of their own before the document: variables, then domains, then apps.
      for (const path of ['/v1/apps/nope/variables', '/v1/apps/nope/domains', '/v1/apps'])
        expect([200, 404]).toContain((await used.call('GET', path)).status);
      const a = await fresh.call('GET', '/_emulator/openapi.json', { as: null });
      const b = await used.call('GET', '/_emulator/openapi.json', { as: null });
      expect(a.status).toBe(200);
      expect(b.text).toBe(a.text);
      expect((await fresh.call('GET', '/_emulator/openapi.json', { as: null })).text).toBe(a.text);
    } finally {
      await Promise.all([fresh.stop(), used.stop()]);
    }
  }, 60_000);
});

describe('the routes files of lazy groups', () => {
  // A lazy group's factory runs at its first request, maybe never: whatever must work from the start (event listeners,
  // timers, hooks) is wired by the area at start. The caches routes once registered the build-cache listener.
  const wiring = new URL('../../src/wiring/', import.meta.url);
  const files = readdirSync(wiring)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) =>
      [
        ...readFileSync(new URL(f, wiring), 'utf8').matchAll(
          /lazyRoutes\('\w+', \(\) =>\s*import\('(\.\.\/modules\/[^']+)'\)/g,
        ),
      ].map((m) => m[1]),
    );

  it('are found in the wiring (every lazy group)', () => {
    expect(files.length).toBe(22);
  });

  it.each(files)('%s declares routes only: no listener, timer or hook registered by its factory', (file) => {
    const source = readFileSync(new URL(file, wiring), 'utf8');
    expect(source).not.toMatch(/\.(onRecord|onRound|subscribe|beforeDelete|addHook)\(|\bset(Interval|Timeout)\(/);
  });
});
