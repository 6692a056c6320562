import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiRoutes } from '../../src/http/api-routes.ts';
import { type AuthService } from '../../src/modules/auth/auth.service.ts';
import { bearerOkAuth as auth, smallHttpApp, TEST_USER as user } from '../support/small-http-app.ts';

// The route declarations (api-routes.ts) and the conformance check, on a small app of their own.
const apps = new Map([['mine', { id: 'ap-1', name: 'mine' }]]);

function makeApp() {
  const r = new ApiRoutes('test');
  r.add({ method: 'get', path: '/v1/good', summary: 'good', responses: { 200: z.object({ n: z.number() }) } }, (c) =>
    c.json({ n: 1 }),
  );
  r.add(
    { method: 'get', path: '/v1/wrong-shape', summary: 'wrong', responses: { 200: z.object({ n: z.number() }) } },
    (c) => c.json({ n: 'one' }),
  );
  r.add({ method: 'get', path: '/v1/wrong-status', summary: 'status', responses: { 200: z.object({}) } }, (c) =>
    c.json({}, 201),
  );
  r.add(
    {
      method: 'get',
      path: '/v1/open',
      summary: 'public',
      auth: 'public',
      responses: { 200: z.object({ open: z.boolean() }) },
    },
    (c) => c.json({ open: true }),
  );
  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/things',
      summary: 'body',
      body: z.object({ thing: z.object({ size: z.number() }) }),
      bodyRoot: 'thing',
      responses: { 201: z.object({ app: z.string(), size: z.number() }) },
    },
    (c, { body }) => c.json({ app: c.get('app').name, size: body.thing.size }, 201),
  );
  return smallHttpApp([r], apps);
}

const call = (path: string, init: RequestInit & { auth?: string | null } = {}) =>
  makeApp().request(path, {
    ...init,
    headers: {
      ...(init.auth === null ? {} : { authorization: init.auth ?? 'Bearer ok' }),
      'content-type': 'application/json',
      ...(typeof init.body === 'string' ? { 'content-length': String(init.body.length) } : {}),
    },
  });

describe('declared routes', () => {
  it('answers that match their schema pass unchanged', async () => {
    const res = await call('/v1/good');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ n: 1 });
  });

  it('an answer off its schema becomes a 500 naming the route and the field', async () => {
    const res = await call('/v1/wrong-shape');
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: string }).error).toMatch(/GET \/v1\/wrong-shape .*n: /);
  });

  it('an undeclared status becomes a 500', async () => {
    const res = await call('/v1/wrong-status');
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: string }).error).toMatch(/status 201 is not declared/);
  });

  it('a route marked public answers without credentials; the others are 401 first', async () => {
    expect((await call('/v1/open', { auth: null })).status).toBe(200);
    expect((await call('/v1/good', { auth: null })).status).toBe(401);
  });

  it('loads :app before the body is read: unknown app 404 whatever the body, else the body is validated', async () => {
    const missing = await call('/v1/apps/theirs/things', { method: 'POST', body: '{not json' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ resource: 'app', error: 'not found' });
    const invalid = await call('/v1/apps/mine/things', { method: 'POST', body: '{"thing": {"size": "big"}}' });
    expect(invalid.status).toBe(422);
    expect(await invalid.json()).toEqual({ errors: { size: ['must be a number'] } });
    const ok = await call('/v1/apps/mine/things', { method: 'POST', body: '{"thing": {"size": 3}}' });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({ app: 'mine', size: 3 });
  });

  it('documents every declared route in the OpenAPI 3.1 document', async () => {
    const doc = (await (await call('/_emulator/openapi.json', { auth: null })).json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/_emulator/openapi.json',
      '/v1/apps/{app}/things',
      '/v1/good',
      '/v1/open',
      '/v1/wrong-shape',
      '/v1/wrong-status',
    ]);
    expect(doc.paths['/v1/open'].get).toMatchObject({ security: [] });
  });
});

describe('a route declaring several content types for one status', () => {
  // The signed logs route answers text, or Server-Sent Events with stream=true, both as 200.
  const app = () => {
    const r = new ApiRoutes('test');
    r.add(
      {
        method: 'get',
        path: '/v1/lines',
        summary: 'lines',
        query: z.object({ as: z.string().optional() }),
        responses: { 200: { contentType: ['text/plain', 'text/event-stream'] } },
      },
      (c, { query }) => {
        const as = query.as;
        if (as === 'sse') return c.body('data: x\n\n', 200, { 'content-type': 'text/event-stream' });
        if (as === 'json') return c.json({ lines: [] });
        return c.text('a line\n');
      },
    );
    return smallHttpApp([r]);
  };
  const get = (q: string) => app().request(`/v1/lines${q}`, { headers: { authorization: 'Bearer ok' } });

  it('accepts each declared type and refuses another one', async () => {
    expect((await get('')).status).toBe(200);
    expect((await get('?as=sse')).headers.get('content-type')).toBe('text/event-stream');
    const wrong = await get('?as=json');
    expect(wrong.status).toBe(500);
    expect(((await wrong.json()) as { error: string }).error).toMatch(
      /declared text\/plain or text\/event-stream, answered application\/json/,
    );
  });

  it('documents both types on the one answer', async () => {
    const doc = (await (await app().request('/_emulator/openapi.json')).json()) as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, unknown> }> } }>;
    };
    expect(Object.keys(doc.paths['/v1/lines'].get.responses['200'].content).sort()).toEqual([
      'text/event-stream',
      'text/plain',
    ]);
  });
});

describe('a route declaring its query', () => {
  const query = z.object({ size: z.enum(['S', 'M']).optional(), token: z.string() });
  const app = () => {
    const r = new ApiRoutes('test');
    r.add(
      {
        method: 'get',
        path: '/v1/sized',
        summary: 'sized',
        query,
        responses: { 200: z.object({ size: z.string(), token: z.string() }) },
      },
      (c, { query: q }) => c.json({ size: q.size ?? 'none', token: q.token ?? 'missing' }),
    );
    const noAuth = { ...auth, authenticate: async () => ({ user, tokenId: null }) } as unknown as AuthService;
    return smallHttpApp([r], apps, { auth: noAuth, validateResponses: false });
  };
  const get = async (q: string) => {
    const res = await app().request(`/v1/sized${q}`, { headers: { authorization: 'Bearer ok' } });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };

  it('hands the handler the parsed query; undeclared parameters are ignored', async () => {
    expect(await get('?size=M&token=t&other=1')).toEqual({ status: 200, body: { size: 'M', token: 't' } });
  });

  it('a value that does not fit is a 400 {error} naming the parameter, before the handler runs', async () => {
    const res = await get('?size=XL&token=t');
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(res.body.error).toMatch(/^invalid query parameter size: /);
  });

  it('a missing required parameter is left to the handler (a signed URL answers 403 itself)', async () => {
    expect(await get('?size=S')).toEqual({ status: 200, body: { size: 'S', token: 'missing' } });
  });
});

describe("a route's path parameters", () => {
  const app = () => {
    const r = new ApiRoutes('test');
    r.add(
      {
        method: 'get',
        path: '/v1/plain/:name/:id',
        summary: 'plain',
        responses: { 200: z.record(z.string(), z.string()) },
      },
      (c, { params }) => c.json({ name: params.name, id: params.id }),
    );
    r.add(
      {
        method: 'get',
        path: '/v1/numbered/:index',
        summary: 'numbered',
        params: z.object({
          index: z
            .string()
            .regex(/^[1-9]\d{0,5}$/)
            .transform(Number),
        }),
        query: z.object({ size: z.enum(['S', 'M']).optional() }),
        responses: { 200: z.object({ next: z.number() }) },
      },
      (c, { params }) => c.json({ next: params.index + 1 }),
    );
    const noAuth = { ...auth, authenticate: async () => ({ user, tokenId: null }) } as unknown as AuthService;
    return smallHttpApp([r], apps, { auth: noAuth });
  };
  const get = async (path: string) => {
    const res = await app().request(path, { headers: { authorization: 'Bearer ok' } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('reach the handler as the strings of the path (decoded) when the route declares no schema', async () => {
    expect(await get('/v1/plain/a%20b/42')).toEqual({ status: 200, body: { name: 'a b', id: '42' } });
  });

  it('reach it parsed by the declared schema', async () => {
    expect(await get('/v1/numbered/41')).toEqual({ status: 200, body: { next: 42 } });
  });

  it('a value the schema refuses names nothing: 404 {resource, error}, before the query is read', async () => {
    expect(await get('/v1/numbered/0')).toEqual({ status: 404, body: { resource: 'index', error: 'not found' } });
    expect(await get('/v1/numbered/x?size=XL')).toEqual({
      status: 404,
      body: { resource: 'index', error: 'not found' },
    });
  });
});
