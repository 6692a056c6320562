import { Writable } from 'node:stream';
import { Hono } from 'hono';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type Emulator } from '../../src/emulator.ts';
import { createHttpApp, hasSubPath } from '../../src/http/app.ts';
import { type AppEnv } from '../../src/http/env.ts';
import { systemClock } from '../../src/shared/clock.ts';
import { TOKENS, testConfig } from '../harness.ts';

// Conventions of the HTTP layer, exercised with app.request() — no port, no socket.
const basic = (t: string) => `Basic ${Buffer.from(`:${t}`).toString('base64')}`;
let emu: Emulator;
beforeAll(() => {
  emu = createEmulator(testConfig({ bodyLimitBytes: 2048 }));
});
afterAll(() => emu.stop());

// Like a real HTTP client, a body comes with its Content-Length (the middleware reads only headers).
const req = (path: string, init: RequestInit = {}) =>
  emu.app.request(path, {
    ...init,
    headers: {
      authorization: basic(TOKENS.dev),
      'content-type': 'application/json',
      ...(typeof init.body === 'string' ? { 'content-length': String(Buffer.byteLength(init.body)) } : {}),
      ...(init.headers as Record<string, string>),
    },
  });

describe('HTTP conventions', () => {
  it('400 {error} with the parser message for malformed JSON', async () => {
    const res = await req('/v1/apps', { method: 'POST', body: '{"app": {"name": ' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string };
    expect(body.error).toMatch(/^There was a problem in the JSON you submitted: .+/);
    expect(body.error).toMatch(/JSON/);
  });

  it('refuses XML and other non-JSON bodies with a JSON error', async () => {
    const res = await req('/v1/apps', {
      method: 'POST',
      body: '<app><name>x</name></app>',
      headers: { 'content-type': 'application/xml' },
    });
    expect(res.status).toBe(415);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(((await res.json()) as { error: string }).error).toMatch(/JSON only/);
  });

  it('refuses bodies over the limit with 413 {error}', async () => {
    const res = await req('/v1/apps', { method: 'POST', body: JSON.stringify({ app: { name: 'x'.repeat(5000) } }) });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 'request body is larger than the limit of 2048 bytes' });
  });

  it('answers unknown routes with a JSON 404', async () => {
    const res = await req('/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ resource: 'route', error: 'no route matches GET /v1/nothing-here' });
  });

  it('422 {errors: {app: [missing field]}} for an empty object on app creation', async () => {
    const res = await req('/v1/apps', { method: 'POST', body: '{}' });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ errors: { app: ['missing field'] } });
  });

  it('requires authentication on every /v1 route', async () => {
    for (const [method, path] of [
      ['GET', '/v1/apps'],
      ['POST', '/v1/apps'],
      ['GET', '/v1/users/self'],
      ['GET', '/v1/tokens'],
      ['GET', '/v1/events'],
      ['GET', '/v1/nothing'],
    ]) {
      const res = await emu.app.request(path, { method });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(((await res.json()) as { error: string }).error).toBeTruthy();
    }
  });

  it('gives every response a request id, and keeps a sane one sent by the client', async () => {
    const a = await req('/v1/apps');
    expect(a.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const b = await req('/v1/apps', { headers: { 'x-request-id': 'my-trace-1' } });
    expect(b.headers.get('x-request-id')).toBe('my-trace-1');
  });

  it('turns an unexpected exception into 500 {error} with the request id, never a stack trace', async () => {
    const boom = new Hono<AppEnv>();
    boom.get('/v1/boom', () => {
      throw new Error('secret internal detail at /src/file.ts:12');
    });
    const lines: { msg?: string; reqId?: string; level?: number }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    const app = createHttpApp({
      logger: pino({ level: 'info' }, sink),
      wallClock: systemClock,
      auth: emu.area('accounts').auth,
      bodyLimitBytes: 1024,
      rateLimit: { enabled: false, perMinute: 60 },
      routes: [boom],
    });
    const res = await app.request('/v1/boom', {
      headers: { authorization: basic(TOKENS.dev), 'x-request-id': 'req-500' },
    });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: 'internal error, request id req-500' });
    expect(text).not.toContain('secret internal detail');
    // The error is logged for the operator, with the request's id (and no access line below debug level).
    expect(lines.map((l) => [l.msg, l.reqId])).toEqual([['unexpected error', 'req-500']]);
  });
});

describe('hasSubPath: the `/v1/apps/:app/*` guard loads the app of sub-paths only', () => {
  it.each([
    ['/v1/apps/my-app/containers', true],
    ['/v1/apps/my-app/x', true],
    ['/v1/apps/my-app/', false],
    ['/v1/apps/my-app', false],
    ['/v1/apps//containers', false],
    ['/v1/apps/', false],
    ['/v1/other/my-app/containers', false],
  ])('%s → %s', (path, expected) => {
    expect(hasSubPath(path)).toBe(expected);
  });
});
