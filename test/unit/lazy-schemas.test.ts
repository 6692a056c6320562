import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiRoutes } from '../../src/http/api-routes.ts';
import { lazySchema } from '../../src/http/api-schemas.ts';
import { smallHttpApp } from '../support/small-http-app.ts';

// Schemas made at first use (lazySchema, src/http/api-schemas.ts) and the route declarations that take them: the route
// groups built at start declare their routes with them, so that a start makes none of their zod schemas.
const apps = new Map([['mine', { id: 'ap-1', name: 'mine' }]]);

/** A lazily made schema that counts how many times it was made. */
function counted<S extends z.ZodType>(make: () => S) {
  const made = { count: 0 };
  const schema = lazySchema(() => {
    made.count++;
    return make();
  });
  return { schema, made };
}

function declare() {
  const body = counted(() => z.object({ thing: z.object({ size: z.number() }) }));
  const query = counted(() => z.object({ size: z.enum(['S', 'M']).optional() }));
  const answer = counted(() => z.object({ app: z.string(), size: z.number(), query: z.string() }));
  const r = new ApiRoutes('test');
  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/things',
      summary: 'body',
      body: body.schema,
      bodyRoot: 'thing',
      query: query.schema,
      responses: { 201: answer.schema },
    },
    // The handler's body and query are typed from the schemas the functions make.
    (c, { body: b, query: q }) => c.json({ app: c.get('app').name, size: b.thing.size, query: q.size ?? 'none' }, 201),
  );
  r.add(
    {
      method: 'get',
      path: '/v1/wrong-shape',
      summary: 'wrong',
      responses: { 200: lazySchema(() => z.object({ n: z.number() })) },
    },
    (c) => c.json({ n: 'one' }),
  );
  return { app: smallHttpApp([r], apps), made: { body: body.made, query: query.made, answer: answer.made } };
}

const post = (app: ReturnType<typeof declare>['app'], path: string, body: string) =>
  app.request(path, {
    method: 'POST',
    body,
    headers: { authorization: 'Bearer ok', 'content-type': 'application/json', 'content-length': String(body.length) },
  });

describe('lazySchema', () => {
  it('makes its schema at the first call, once: every call gives the same schema', () => {
    const { schema, made } = counted(() => z.object({ n: z.number() }));
    expect(made.count).toBe(0);
    const first = schema();
    expect(made.count).toBe(1);
    expect(schema()).toBe(first);
    expect(made.count).toBe(1);
    expect(first.safeParse({ n: 1 }).success).toBe(true);
  });
});

describe('a route declared with schemas made at first use', () => {
  it('makes none of them when it is declared', () => {
    const { made } = declare();
    expect(made).toEqual({ body: { count: 0 }, query: { count: 0 }, answer: { count: 0 } });
  });

  it('validates its body and query as a route with plain schemas does (422 {errors}, 400 {error})', async () => {
    const { app, made } = declare();
    const invalid = await post(app, '/v1/apps/mine/things', '{"thing": {"size": "big"}}');
    expect(invalid.status).toBe(422);
    expect(await invalid.json()).toEqual({ errors: { size: ['must be a number'] } });
    const badQuery = await post(app, '/v1/apps/mine/things?size=XL', '{"thing": {"size": 3}}');
    expect(badQuery.status).toBe(400);
    expect(((await badQuery.json()) as { error: string }).error).toMatch(/^invalid query parameter size: /);
    const ok = await post(app, '/v1/apps/mine/things?size=M', '{"thing": {"size": 3}}');
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({ app: 'mine', size: 3, query: 'M' });
    // Made once each, however many requests used them.
    expect(made).toEqual({ body: { count: 1 }, query: { count: 1 }, answer: { count: 1 } });
  });

  it('an answer off its lazily made schema is still caught by the conformance check', async () => {
    const { app } = declare();
    const res = await app.request('/v1/wrong-shape', { headers: { authorization: 'Bearer ok' } });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: string }).error).toMatch(/GET \/v1\/wrong-shape.*n:/);
  });

  it('documents them in the OpenAPI document as plain schemas would be', async () => {
    const { app, made } = declare();
    const doc = (await (await app.request('/_emulator/openapi.json')).json()) as {
      paths: Record<string, { post: Record<string, unknown> }>;
    };
    const op = doc.paths['/v1/apps/{app}/things'].post as {
      parameters: { name: string; in: string }[];
      requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
      responses: Record<string, { content: Record<string, { schema: { properties: Record<string, unknown> } }> }>;
    };
    expect(op.parameters.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['path:app', 'query:size']);
    expect(Object.keys(op.requestBody.content['application/json'].schema.properties)).toEqual(['thing']);
    expect(Object.keys(op.responses['201'].content['application/json'].schema.properties)).toEqual([
      'app',
      'size',
      'query',
    ]);
    expect(made).toEqual({ body: { count: 1 }, query: { count: 1 }, answer: { count: 1 } });
  });
});

describe('the start of the emulator', () => {
  // zod registers a schema with an `id` (`.meta({ id })`) when it is made: the registry tells which were.
  const made = () => [...(z.globalRegistry as unknown as { _idmap: Map<string, unknown> })._idmap.keys()];
  // The documented schemas of the route groups built at start (control, one-off, the database API, logs, sources,
  // health) and of the areas whose services they are imported with.
  const startGroups = ['EmulatorSnapshot', 'EmulatorFault', 'OneOffRun', 'Container', 'Operation', 'Addon', 'Database'];
  const more = ['DatabaseNG', 'FirewallRule', 'LogsUrl', 'LogsArchives', 'Source'];

  it('makes none of the route groups’ schemas; the OpenAPI document makes them', async () => {
    const { startEmulator } = await import('../harness.ts');
    const { FakeLogsRuntime } = await import('../support/fake-logs-runtime.ts');
    const emu = await startEmulator({}, { runtime: new FakeLogsRuntime() });
    try {
      // Something was made at start (the configuration's schema has no ids; the apps' schemas have some).
      expect(made()).toContain('App');
      expect(made().filter((id) => [...startGroups, ...more, 'EmulatorHealth'].includes(id))).toEqual([]);
      // The health answer, checked against its schema in the suite (validateResponses), makes that one only.
      expect((await emu.call('GET', '/_emulator/health', { as: null })).status).toBe(200);
      expect(made()).toContain('EmulatorHealth');
      expect(made().filter((id) => [...startGroups, ...more].includes(id))).toEqual([]);
      expect((await emu.call('GET', '/_emulator/openapi.json', { as: null })).status).toBe(200);
      expect(made()).toEqual(expect.arrayContaining([...startGroups, ...more]));
    } finally {
      await emu.stop();
    }
  }, 60_000);
});
