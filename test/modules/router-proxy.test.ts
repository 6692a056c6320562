import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { deadPort, send, startTestRouter, startUpstream, type TestRouter, until } from './router.helpers.ts';

// The proxying itself: headers, bodies both ways, streaming, WebSocket, failures and timeouts.
describe('router: proxying', () => {
  let r: TestRouter;
  const cleanup: (() => Promise<unknown> | void)[] = [];
  beforeEach(async () => {
    r = await startTestRouter();
    cleanup.push(() => r.close());
  });
  afterEach(async () => {
    while (cleanup.length) await cleanup.pop()!();
  });
  const upstream = async (...args: Parameters<typeof startUpstream>) => {
    const up = await startUpstream(...args);
    cleanup.push(() => up.close());
    return up;
  };
  const host = (app: string) => `${app}.localhost:${r.port}`;

  it('forwards the platform headers, keeps Host, drops hop-by-hop headers', async () => {
    r.app('hdr-app', [await upstream('h')]);
    const res = await send(r.port, {
      host: host('hdr-app'),
      path: '/headers',
      headers: {
        connection: 'keep-alive, x-private',
        'x-private': 'secret',
        'keep-alive': 'timeout=5',
        'proxy-authorization': 'Basic eA==',
        'x-custom': 'kept',
      },
    });
    const seen = JSON.parse(res.body);
    expect(seen).toMatchObject({
      host: host('hdr-app'),
      'x-forwarded-for': '127.0.0.1',
      'x-real-ip': '127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-port': String(r.port),
      'x-forwarded-host': host('hdr-app'),
      'x-custom': 'kept',
    });
    expect(seen['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(res.headers['x-request-id']).toBe(seen['x-request-id']);
    expect(seen['x-request-start']).toMatch(/^t=\d{10}\.\d{3}$/);
    for (const gone of ['x-private', 'keep-alive', 'proxy-authorization']) expect(seen).not.toHaveProperty(gone);
    // A client's own request id and forwarding chain are kept.
    const again = JSON.parse(
      (
        await send(r.port, {
          host: host('hdr-app'),
          path: '/headers',
          headers: { 'x-request-id': 'my-req-123', 'x-forwarded-for': '203.0.113.9' },
        })
      ).body,
    );
    expect(again['x-request-id']).toBe('my-req-123');
    expect(again['x-forwarded-for']).toBe('203.0.113.9, 127.0.0.1');
  });

  it('passes request bodies, with a length or chunked, unchanged', async () => {
    r.app('body-app', [await upstream('b')]);
    const big = randomBytes(3 * 1024 * 1024 + 7);
    const sized = JSON.parse(
      (
        await send(r.port, {
          host: host('body-app'),
          method: 'POST',
          path: '/echo',
          body: big,
          headers: { 'content-length': String(big.length) },
        })
      ).body,
    );
    expect(sized).toMatchObject({ len: big.length, sha256: createHash('sha256').update(big).digest('hex'), te: null });
    const parts = [randomBytes(70_000), randomBytes(1), randomBytes(200_000)];
    const chunked = JSON.parse(
      (await send(r.port, { host: host('body-app'), method: 'PUT', path: '/echo', body: parts })).body,
    );
    expect(chunked).toMatchObject({
      len: 270_001,
      sha256: createHash('sha256').update(Buffer.concat(parts)).digest('hex'),
      te: 'chunked',
    });
  });

  it('streams responses: the first chunk reaches the client before the container ends', async () => {
    let release!: () => void;
    const released = new Promise<void>((ok) => (release = ok));
    r.app('stream-app', [
      await upstream('s', (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
        // The container only ends after the client saw the first event: a buffering proxy never gets here.
        void released.then(() => res.end('data: second\n\n'));
      }),
    ]);
    const body = await new Promise<string>((ok, fail) => {
      const req = request(
        { host: '127.0.0.1', port: r.port, path: '/', headers: { host: host('stream-app') }, agent: false },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            if (!text) {
              expect(c).toBe('data: first\n\n');
              release();
            }
            text += c;
          });
          res.on('end', () => ok(text));
        },
      );
      req.on('error', fail);
      req.end();
    });
    expect(body).toBe('data: first\n\ndata: second\n\n');
  });

  it('passes WebSocket upgrades through and records them when they close', async () => {
    const up = await upstream('ws-up', (_req, res) => res.writeHead(426).end());
    const wss = new WebSocketServer({ server: up.server });
    cleanup.push(() => new Promise((ok) => wss.close(ok)));
    let forwardedFor: string | undefined;
    wss.on('connection', (sock, req) => {
      forwardedFor = req.headers['x-forwarded-for'] as string;
      sock.on('message', (m) => sock.send(`echo:${m.toString()}`));
    });
    r.app('ws-app', [up]);
    const ws = new WebSocket(`ws://127.0.0.1:${r.port}/chat`, { headers: { host: host('ws-app') } });
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok());
      ws.once('error', fail);
    });
    const reply = new Promise<string>((ok) => ws.once('message', (m) => ok(m.toString())));
    ws.send('hello');
    expect(await reply).toBe('echo:hello');
    expect(forwardedFor).toBe('127.0.0.1');
    ws.close();
    const rec = await until(() => r.records.find((x) => x.appName === 'ws-app'), 'the WebSocket record');
    expect(rec).toMatchObject({ status: 101, container: 'web-1', path: '/chat' });
  });

  it('refuses an upgrade with the router pages too (503 with no container)', async () => {
    r.app('ws-empty', []);
    const ws = new WebSocket(`ws://127.0.0.1:${r.port}/`, { headers: { host: host('ws-empty') } });
    const status = await new Promise<number>((ok) =>
      ws.once('unexpected-response', (_req, res) => ok(res.statusCode ?? 0)),
    );
    expect(status).toBe(503);
  });

  it('502 when the only container refuses the connection', async () => {
    r.app('dead-app', [{ containerName: 'web-1', port: await deadPort() }]);
    const res = await send(r.port, { host: host('dead-app') });
    expect(res.status).toBe(502);
    expect(res.body).toContain('web-1');
    expect(res.headers['x-scalingo-error']).toBeTruthy();
    expect(await until(() => r.records.find((x) => x.appName === 'dead-app'), 'record')).toMatchObject({
      status: 502,
      container: 'web-1',
    });
  });

  it('a refused connection falls back to the next container, whatever the method', async () => {
    const live = await upstream('live');
    r.app('fallback-app', [
      { containerName: 'web-1', port: await deadPort() },
      { containerName: 'web-2', port: live.port },
    ]);
    const get = await send(r.port, { host: host('fallback-app') });
    expect(get).toMatchObject({ status: 200, body: 'live' });
    r.app('fallback-post', [
      { containerName: 'web-1', port: await deadPort() },
      { containerName: 'web-2', port: live.port },
    ]);
    const post = await send(r.port, {
      host: host('fallback-post'),
      method: 'POST',
      path: '/echo',
      body: 'payload',
      headers: { 'content-length': '7' },
    });
    expect(JSON.parse(post.body)).toMatchObject({ name: 'live', len: 7 });
    expect(await until(() => r.records.find((x) => x.appName === 'fallback-app'), 'record')).toMatchObject({
      status: 200,
      container: 'web-2',
    });
  });

  it('a connection cut after the request was sent is retried only for idempotent requests without a body', async () => {
    const cutter = await upstream('cutter', (req) => req.socket.destroy());
    const live = await upstream('live');
    r.app('cut-get', [cutter, live]);
    expect(await send(r.port, { host: host('cut-get') })).toMatchObject({ status: 200, body: 'live' });
    expect(cutter.hits).toBe(1);
    r.app('cut-post', [cutter, live]);
    const post = await send(r.port, {
      host: host('cut-post'),
      method: 'POST',
      path: '/echo',
      body: 'once',
      headers: { 'content-length': '4' },
    });
    expect(post.status).toBe(502);
    expect(cutter.hits).toBe(2);
    expect(live.hits).toBe(1); // the POST was not replayed on another container
  });

  it('504 when the container does not answer in time', async () => {
    const slow = await startTestRouter({ timeoutMs: 200 });
    cleanup.push(() => slow.close());
    slow.app('slow-app', [await upstream('mute', () => undefined)]);
    const res = await send(slow.port, { host: `slow-app.localhost:${slow.port}` });
    expect(res.status).toBe(504);
    expect(await until(() => slow.records.find((x) => x.appName === 'slow-app'), 'record')).toMatchObject({
      status: 504,
      container: 'web-1',
    });
  });

  it('499 when the client leaves before the answer, and the container request is cancelled', async () => {
    let upstreamClosed = false;
    const hang = await upstream('hang', (req) => req.on('close', () => (upstreamClosed = true)));
    r.app('gone-app', [hang]);
    const req = request({
      host: '127.0.0.1',
      port: r.port,
      path: '/',
      headers: { host: host('gone-app') },
      agent: false,
    });
    req.on('error', () => undefined);
    req.end();
    await until(() => hang.hits === 1, 'the request to reach the container');
    req.destroy();
    expect(await until(() => r.records.find((x) => x.appName === 'gone-app'), 'record')).toMatchObject({ status: 499 });
    await until(() => upstreamClosed, 'the container request to be closed');
  });

  it('413 for a body over the platform limit, without reaching the container', async () => {
    const up = await upstream('big');
    r.app('big-app', [up]);
    const res = await new Promise<number>((ok, fail) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: r.port,
          method: 'POST',
          path: '/',
          headers: { host: host('big-app'), 'content-length': String(76 * 1024 * 1024) },
          agent: false,
        },
        (res) => {
          res.resume();
          ok(res.statusCode ?? 0);
        },
      );
      req.on('error', fail);
      req.flushHeaders();
    });
    expect(res).toBe(413);
    expect(up.hits).toBe(0);
  });
});
