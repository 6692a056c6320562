import { type AddressInfo, connect } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestHeader } from '../../src/http/node-request.ts';
import { type Harness, startEmulator } from '../harness.ts';

// Headers read from Node's request (src/http/node-request.ts) must be what hono's c.req.header() reads, over a
// real socket (where the Node request exists), repeated and oddly cased headers included.

/** Sends a raw HTTP/1.1 request and resolves with the raw answer (the server closes: Connection: close). */
function rawRequest(port: number, head: string, body = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (answer += d));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.write(`${head.trim().split('\n').join('\r\n')}\r\nConnection: close\r\n\r\n${body}`);
  });
}

const bodyOf = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4);

describe('requestHeader', () => {
  let server: ServerType;
  let port: number;
  const NAMES = ['content-type', 'x-dry-run', 'x-repeated', 'content-length', 'transfer-encoding', 'x-absent'];
  beforeAll(async () => {
    const app = new Hono();
    app.all('/', (c) => c.json(NAMES.map((n) => [requestHeader(c, n) ?? null, c.req.header(n) ?? null])));
    await new Promise<void>((r) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => r());
    });
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server.close());

  it('reads every header as hono does: absent, single, repeated (joined with ", "), in any case', async () => {
    const answer = await rawRequest(
      port,
      `POST / HTTP/1.1
Host: x
CONTENT-TYPE: application/json
X-Repeated: one
x-dry-run: TRUE
x-repeated: two
X-REPEATED:   three
Content-Length: 2`,
      '{}',
    );
    const pairs = JSON.parse(bodyOf(answer)) as [string | null, string | null][];
    for (const [ours, hono] of pairs) expect(ours).toBe(hono);
    expect(pairs.map(([ours]) => ours)).toEqual(['application/json', 'TRUE', 'one, two, three', '2', null, null]);
  });

  it('reads Transfer-Encoding of a chunked body as hono does', async () => {
    const answer = await rawRequest(
      port,
      'POST / HTTP/1.1\nHost: x\nTransfer-Encoding: chunked',
      '2\r\n{}\r\n0\r\n\r\n',
    );
    const pairs = JSON.parse(bodyOf(answer)) as [string | null, string | null][];
    for (const [ours, hono] of pairs) expect(ours).toBe(hono);
    expect(pairs[4][0]).toBe('chunked');
  });
});

describe('the body guards over a socket', () => {
  let h: Harness;
  let port: number;
  let auth: string;
  beforeAll(async () => {
    h = await startEmulator({ bodyLimitBytes: 2048 });
    port = Number(new URL(h.api).port);
    auth = `Bearer ${await h.bearer()}`;
  });
  afterAll(() => h.stop());

  const post = (headers: string, body: string) =>
    rawRequest(port, `POST /v1/apps HTTP/1.1\nHost: x\nAuthorization: ${auth}\n${headers}`, body);

  it('refuses a repeated Content-Type whose first value is not JSON, naming both as hono joined them', async () => {
    const body = '{"app":{"name":"guard-one"}}';
    const answer = await post(
      `Content-Type: text/xml\nContent-Type: application/json\nContent-Length: ${body.length}`,
      body,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 415 /);
    expect(JSON.parse(bodyOf(answer))).toEqual({
      error: 'the API accepts JSON only (Content-Type: application/json), not "text/xml, application/json"',
    });
  });

  it('creates with a JSON Content-Type, and refuses a body over the limit by its Content-Length or in chunks', async () => {
    const body = '{"app":{"name":"guard-two"}}';
    const ok = await post(`Content-Type: application/json\nContent-Length: ${body.length}`, body);
    expect(ok).toMatch(/^HTTP\/1\.1 201 /);
    const big = JSON.stringify({ app: { name: 'x'.repeat(3000) } });
    const byLength = await post(`Content-Type: application/json\nContent-Length: ${big.length}`, big);
    expect(byLength).toMatch(/^HTTP\/1\.1 413 /);
    const chunked = `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`;
    const byChunks = await post('Content-Type: application/json\nTransfer-Encoding: chunked', chunked);
    expect(byChunks).toMatch(/^HTTP\/1\.1 413 /);
    expect(JSON.parse(bodyOf(byChunks))).toEqual({ error: 'request body is larger than the limit of 2048 bytes' });
    // A chunked body under the limit is read (through hono) and creates the app.
    const small = '{"app":{"name":"guard-three"}}';
    const created = await post(
      'Content-Type: application/json\nTransfer-Encoding: chunked',
      `${small.length.toString(16)}\r\n${small}\r\n0\r\n\r\n`,
    );
    expect(created).toMatch(/^HTTP\/1\.1 201 /);
  });
});
