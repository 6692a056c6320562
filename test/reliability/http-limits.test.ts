import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { createApp } from '../support/logs.ts';

// Client mistakes are 4xx in the platform's shapes, never 500: bodies nested 10,000 deep, page
// numbers past the safe integers; authentication answers before the media-type and size checks; a
// connection stays usable (or is closed plainly) after an answer that did not read a 1 MB body.
const MB = 1024 * 1024;
const basic = `Basic ${Buffer.from(`:${TOKENS.dev}`).toString('base64')}`;
const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

/** Writes raw bytes on one connection and collects every response head until the server closes or `count` came. */
async function rawExchange(
  port: number,
  chunks: (string | Buffer)[],
  count: number,
): Promise<{ statuses: number[]; heads: string[]; closed: boolean }> {
  const socket = connect(port, '127.0.0.1');
  let data = '';
  let closed = false;
  socket.on('data', (b) => (data += b.toString('latin1')));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  await new Promise((r) => socket.once('connect', r));
  for (const c of chunks) socket.write(c);
  const heads = () => [...data.matchAll(/HTTP\/1\.1 \d{3}[\s\S]*?\r\n\r\n/g)].map((m) => m[0]);
  await eventually(() => heads().length >= count || closed, { what: `${count} responses or the close` });
  socket.destroy();
  return { statuses: heads().map((h) => Number(h.slice(9, 12))), heads: heads(), closed };
}

describe('HTTP limits: depth, integers, authentication first, keep-alive', () => {
  let h: Harness;
  let port: number;
  let alertId: string;

  beforeAll(async () => {
    h = await startEmulator({}, { runtime: new FakeLogsRuntime() });
    port = Number(new URL(h.api).port);
    await createApp(h, 'limits-app');
    alertId = (
      await h.call('POST', '/v1/apps/limits-app/alerts', {
        body: { alert: { container_type: 'web', metric: 'cpu', limit: 0.5 } },
      })
    ).body.alert.id;
  });
  afterAll(() => h.stop());

  it('alert metadata nested 10,000 deep: 400 {error} on POST, PATCH and PUT; 32 levels still accepted', async () => {
    const body = `{"alert":{"container_type":"web","metric":"cpu","limit":0.5,"metadata":${deep(10_000)}}}`;
    for (const [method, path] of [
      ['POST', '/v1/apps/limits-app/alerts'],
      ['PATCH', `/v1/apps/limits-app/alerts/${alertId}`],
      ['PUT', `/v1/apps/limits-app/alerts/${alertId}`],
    ]) {
      const res = await h.call(method, path, { raw: body, headers: { 'content-type': 'application/json' } });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body).toEqual({ error: expect.stringMatching(/nested deeper than 32 levels/) });
    }
    // A deep array, and brackets inside strings (which are not nesting).
    expect(
      (
        await h.call('POST', '/v1/apps/limits-app/variables', {
          raw: `{"variable":${'['.repeat(5000)}${']'.repeat(5000)}}`,
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    const strings = await h.call('POST', '/v1/apps/limits-app/variables', {
      body: { variable: { name: 'BRACKETS', value: '{'.repeat(100) + '['.repeat(100) } },
    });
    expect(strings.status).toBe(201);
    // metadata at depth 30 (32 with the root and "alert") is fine.
    const ok = await h.call('POST', '/v1/apps/limits-app/alerts', {
      raw: `{"alert":{"container_type":"web","metric":"memory","limit":0.5,"metadata":${deep(29)}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(ok.status).toBe(201);
  });

  it('page and per_page past the safe integers: 422 {errors} on every paginated route, never 500', async () => {
    const paginated = [
      '/v1/events',
      '/v1/apps/limits-app/events',
      '/v1/apps/limits-app/deployments',
      '/v1/apps/limits-app/child_apps',
      '/v1/apps/limits-app/logs_archives',
    ];
    for (const path of paginated) {
      const cases = [
        ['page', '99999999999999999999'],
        ['page', '1000000000'],
        ['per_page', '99999999999999999999'],
        ['page', '1e3'],
        ['page', '-1'],
      ];
      // logs_archives takes `page` (Go CLI) or `cursor`, no per_page.
      for (const [param, value] of cases.filter(([p]) => !(path.endsWith('logs_archives') && p === 'per_page'))) {
        const res = await h.call('GET', `${path}?${param}=${value}`);
        expect(res.status, `${path}?${param}=${value}: ${res.text}`).toBe(422);
        expect(Object.keys(res.body.errors)).toEqual([param]);
      }
      expect((await h.call('GET', `${path}?page=999999999&per_page=0`)).status, path).toBe(200);
    }
    // Every GET route, with hostile page numbers: no 5xx anywhere.
    const gets = [
      ...new Set(h.emu.app.routes.filter((r) => r.method === 'GET' && !r.path.includes('*')).map((r) => r.path)),
    ];
    for (const p of gets) {
      const res = await h.call(
        'GET',
        `${p.replace(':app', 'limits-app').replace(/:(\w+)/g, 'x1')}?page=99999999999999999999&per_page=99999999999999999999&n=99999999999999999999&cursor=99999999999999999999`,
      );
      expect(res.status, p).toBeLessThan(500);
    }
  });

  it('without credentials: 401 before 415 (not JSON) and 413 (over the limit), over real HTTP', async () => {
    const xml = await fetch(`${h.api}/v1/apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '<app/>',
    });
    expect(xml.status).toBe(401);
    const big = await fetch(`${h.api}/v1/apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"a":"${'x'.repeat(2 * MB)}"}`,
    });
    expect(big.status).toBe(401);
    expect(await big.json()).toEqual({ error: expect.any(String) });
    // With credentials the same requests get their 415 and 413.
    expect(
      (
        await fetch(`${h.api}/v1/apps`, {
          method: 'POST',
          headers: { authorization: basic, 'content-type': 'application/xml' },
          body: '<app/>',
        })
      ).status,
    ).toBe(415);
    expect(
      (
        await fetch(`${h.api}/v1/apps`, {
          method: 'POST',
          headers: { authorization: basic, 'content-type': 'application/json' },
          body: `{"a":"${'x'.repeat(2 * MB)}"}`,
        })
      ).status,
    ).toBe(413);
  });

  it('keep-alive: after an answer that did not read a 1 MB body, the next request on the connection is answered (or the connection was closed with Connection: close)', async () => {
    const oneMb = `{"app":{"name":"${'x'.repeat(MB - 40)}"}}`;
    const health = 'GET /_emulator/health HTTP/1.1\r\nHost: x\r\n\r\n';
    const post = (headers: string, body: string) =>
      `POST /v1/apps HTTP/1.1\r\nHost: x\r\n${headers}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    // 1. refused before the body is read (no credentials), 2. refused for its type, 3. a 404 route.
    for (const first of [
      post('', oneMb),
      post(`Authorization: ${basic}\r\n`, oneMb).replace('application/json', 'application/xml'),
      post(`Authorization: ${basic}\r\n`, oneMb).replace('/v1/apps', '/v1/nowhere'),
    ]) {
      const r = await rawExchange(port, [first, health], 2);
      expect(r.statuses.length, r.heads.join('\n')).toBe(2);
      expect(r.statuses[1]).toBe(200);
      expect(r.heads[0]).toMatch(/keep-alive/i);
    }
    // Over the body limit: the answer says Connection: close, and the connection is closed (not reused).
    const over = post(`Authorization: ${basic}\r\n`, `{"a":"${'y'.repeat(MB + 10)}"}`);
    const r = await rawExchange(port, [over, health], 2);
    expect(r.statuses[0]).toBe(413);
    expect(r.heads[0]).toMatch(/^connection: close$/im);
    expect(r.heads[0]).not.toMatch(/keep-alive/i);
    expect(r.closed || r.statuses.length === 2).toBe(true);
    // And a fresh connection works.
    expect((await rawExchange(port, [health], 1)).statuses).toEqual([200]);
  });
});
