import { request } from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';

// GET /v1/apps/:app as a client sees it on the emulator's port, where it answers from its cache through the
// HTTP app's synchronous chain (src/http/sync-chain.ts): authentication first, the access check, injected
// faults, the request id, the access log and the answer's headers all as on every other route.
const ADMIN = 'admin-token-for-app-get-0000000';
const NAME = 'get-me';

describe('GET /v1/apps/:app', () => {
  let h: Harness;
  let bearer: string;
  const logLines: { msg?: string; method?: string; path?: string; status?: number; reqId?: string }[] = [];
  const admin = (method: string, path: string, body?: unknown) =>
    h.call(method, `/_emulator${path}`, { body, as: { bearer: ADMIN } });
  // Twice: the first answer is made, the second comes from the cache.
  const twice = async (opts: Parameters<Harness['call']>[2] = {}) => [
    await h.call('GET', `/v1/apps/${NAME}`, opts),
    await h.call('GET', `/v1/apps/${NAME}`, opts),
  ];

  // Headers as a list, so that one may be repeated (fetch joins a repeated header before sending it).
  const rawGet = (headers: string[]) =>
    new Promise<{ status: number; body: string; requestId: unknown }>((ok, fail) => {
      const url = new URL(`${h.api}/v1/apps/${NAME}`);
      // A list of headers gets no Host of Node's: HTTP/1.1 requires one.
      const req = request(url, { headers: ['Host', url.host, ...headers] }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => ok({ status: res.statusCode ?? 0, body, requestId: res.headers['x-request-id'] }));
        res.on('error', fail);
      });
      req.on('error', fail);
      req.end();
    });

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n')) if (line) logLines.push(JSON.parse(line));
        done();
      },
    });
    h = await startEmulator({ adminToken: ADMIN }, { logger: pino({ level: 'debug' }, sink) });
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: NAME } } })).status).toBe(201);
    bearer = await h.bearer();
  });
  afterAll(() => h.stop());

  it('answers the same bytes and headers made and cached: JSON, its length, a request id per request', async () => {
    const [made, cached] = await twice({ as: { bearer } });
    for (const res of [made, cached]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(res.text)));
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(cached.text).toBe(made.text);
    expect(made.body.app.name).toBe(NAME);
    expect(cached.headers.get('x-request-id')).not.toBe(made.headers.get('x-request-id'));
    // A client's own valid id is kept.
    const [, mine] = await twice({ as: { bearer }, headers: { 'x-request-id': 'client-id-42' } });
    expect(mine.headers.get('x-request-id')).toBe('client-id-42');
  });

  it('every answer carries exactly one X-Request-ID: the cached GET built with it, and the answers stamped after the chain', async () => {
    const answers = [
      ...(await twice({ as: { bearer } })),
      ...(await twice({ as: 'other' })), // 404 of the app
      await h.call('GET', `/v1/apps/${NAME}`, { as: null }), // 401
      await h.call('POST', '/v1/apps', { body: { app: { name: 'Not Valid!' } } }), // 422, an async route
      await h.call('GET', '/v1/no-such-route'),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 404, 404, 401, 422, 404]);
    // Two copies would read "a, b" (fetch joins a repeated header).
    for (const res of answers) expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(answers.map((r) => r.headers.get('x-request-id'))).size).toBe(answers.length);
    const [, mine] = await twice({ as: 'other', headers: { 'x-request-id': 'client-id-43' } });
    expect(mine.headers.get('x-request-id')).toBe('client-id-43');
  });

  it('authenticates first: 401 without credentials or with a bad bearer, even once the answer is cached', async () => {
    expect((await h.call('GET', `/v1/apps/${NAME}`, { as: { bearer } })).status).toBe(200);
    for (const as of [null, { bearer: `${bearer.slice(0, -4)}AAAA` }, { bearer: 'not-a-jwt' }]) {
      const res = await h.call('GET', `/v1/apps/${NAME}`, { as });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: expect.any(String) });
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
  });

  it('a repeated Authorization is refused as before (read joined, no bearer), whichever copy is the good one', async () => {
    expect((await h.call('GET', `/v1/apps/${NAME}`, { as: { bearer } })).status).toBe(200);
    const good = `Bearer ${bearer}`;
    for (const headers of [
      ['Authorization', good, 'Authorization', 'Bearer not-a-jwt'],
      ['Authorization', 'Bearer not-a-jwt', 'authorization', good],
      ['Authorization', good, 'AUTHORIZATION', good],
    ]) {
      const res = await rawGet(headers);
      expect(res.status, `${JSON.stringify(headers)} ${res.body}`).toBe(401);
      expect(JSON.parse(res.body)).toEqual({ error: 'invalid bearer token' });
      expect(res.requestId).toMatch(/^[0-9a-f-]{36}$/);
    }
    // One copy, in any case of the header's name and with spaces around its value, is the same bearer.
    for (const headers of [
      ['authorization', good],
      ['AUTHORIZATION', `  ${good}  `],
    ])
      expect((await rawGet(headers)).status, JSON.stringify(headers)).toBe(200);
    // The scheme's name in lower case is accepted, as it was before the bearer was cached.
    expect((await rawGet(['Authorization', `bearer ${bearer}`])).status).toBe(200);
  });

  it('X-Request-ID: a client id kept trimmed, a repeated or invalid one replaced', async () => {
    const good = `Bearer ${bearer}`;
    const id = async (...sent: string[]) => (await rawGet(['Authorization', good, ...sent])).requestId;
    expect(await id('X-Request-ID', '  trimmed-id-1  ')).toBe('trimmed-id-1');
    expect(await id('x-request-id', 'twice-a', 'X-Request-Id', 'twice-b')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await id('X-Request-ID', 'not valid!')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("another user's app is a 404, whoever read it before", async () => {
    await twice();
    for (const res of await twice({ as: 'other' })) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ resource: 'app', error: expect.any(String) });
    }
  });

  it('an API fault injected on the route still applies to a cached answer, then the route answers again', async () => {
    await twice();
    const added = await admin('POST', '/faults', {
      fault: { type: 'api', method: 'GET', path: '/v1/apps/*', status: 503, count: 1 },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const [faulted, after] = await twice();
    expect(faulted.status).toBe(503);
    expect(faulted.body).toEqual({ error: expect.any(String) });
    expect(after.status).toBe(200);
    expect((await admin('GET', '/faults')).body.faults).toEqual([]);
  });

  it('the access log records each request, answered or refused', async () => {
    logLines.length = 0;
    const answers = [...(await twice()), await h.call('GET', `/v1/apps/${NAME}`, { as: null })];
    const requests = logLines.filter((l) => l.msg === 'request' && l.path === `/v1/apps/${NAME}`);
    expect(requests.map((l) => [l.method, l.status])).toEqual([
      ['GET', 200],
      ['GET', 200],
      ['GET', 401],
    ]);
    // Each line carries the id its answer gave the client.
    expect(requests.map((l) => l.reqId)).toEqual(answers.map((r) => r.headers.get('x-request-id')));
  });
});

describe('GET /v1/apps/:app with the rate limit on', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startEmulator({ rateLimit: { enabled: true, perMinute: 60 } });
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: NAME } } })).status).toBe(201);
  });
  afterAll(() => h.stop());

  it('carries the rate-limit headers on the cached answer too', async () => {
    const first = await h.call('GET', `/v1/apps/${NAME}`);
    const second = await h.call('GET', `/v1/apps/${NAME}`);
    expect(second.text).toBe(first.text);
    expect(first.headers.get('x-ratelimit-limit')).toBe('60');
    // Set on Node's response before the answer, merged with the answer's own headers (its request id).
    for (const res of [first, second]) expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(first.headers.get('x-ratelimit-remaining')) - 1).toBe(
      Number(second.headers.get('x-ratelimit-remaining')),
    );
  });
});
