import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { send, startTestRouter, startUpstream, type TestRouter, type TestUpstream, until } from './router.helpers.ts';

// The router over a stubbed resolve(): choosing containers, its own answers, records and router logs.
describe('router: balancing, settings, pages, records', () => {
  let r: TestRouter;
  let ups: TestUpstream[];
  beforeEach(async () => {
    r = await startTestRouter();
    ups = await Promise.all(['alpha', 'beta', 'gamma'].map((n) => startUpstream(n)));
  });
  afterEach(async () => {
    await r.close();
    await Promise.all(ups.map((u) => u.close()));
  });
  const get = (app: string, path = '/', headers: Record<string, string> = {}) =>
    send(r.port, { host: `${app}.localhost:${r.port}`, path, headers });

  it('round-robins across the running web containers, in turn', async () => {
    r.app('rr-app', ups);
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) seen.push((await get('rr-app')).body);
    expect(seen).toEqual(['alpha', 'beta', 'gamma', 'alpha', 'beta', 'gamma']);
    expect(ups.map((u) => u.hits)).toEqual([2, 2, 2]);
  });

  it('sticky sessions: the sc-sticky-session cookie pins a client while its container exists', async () => {
    const target = r.app('sticky-app', ups, { stickySession: true });
    const first = await get('sticky-app');
    const cookie = [first.headers['set-cookie']].flat().find((c) => c?.startsWith('sc-sticky-session='));
    expect(cookie).toMatch(/^sc-sticky-session=[\w-]+; Expires=.+ GMT; Max-Age=86400; Path=\/; HttpOnly$/);
    const pin = cookie!.split(';')[0];
    const pinned: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await get('sticky-app', '/', { cookie: `other=1; ${pin}` });
      pinned.push(res.body);
      expect(res.headers['set-cookie']?.[0]).toMatch(/^sc-sticky-session=/); // renewed at every response
    }
    expect(new Set(pinned)).toEqual(new Set([first.body]));
    // Without the cookie, clients are still spread.
    const free = await Promise.all([0, 1, 2].map(() => get('sticky-app')));
    expect(new Set(free.map((f) => f.body)).size).toBeGreaterThan(1);
    // Its container gone, the client goes elsewhere and is pinned anew.
    const pinnedPort = ups.find((u) => u.name === first.body)!.port;
    target.upstreams = target.upstreams.filter((u) => u.port !== pinnedPort);
    const moved = await get('sticky-app', '/', { cookie: pin });
    expect(moved.status).toBe(200);
    expect(moved.body).not.toBe(first.body);
    expect(moved.headers['set-cookie']![0].split(';')[0]).not.toBe(pin);
  });

  it('no sticky cookie when sticky sessions are off', async () => {
    r.app('plain-app', ups);
    expect((await get('plain-app')).headers['set-cookie']).toBeUndefined();
  });

  it('force_https: plain HTTP gets a 301 to https; X-Forwarded-Proto: https is served with HSTS', async () => {
    r.app('https-app', ups, { forceHttps: true });
    const redirect = await get('https-app', '/some/path?x=1');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('https://https-app.localhost/some/path?x=1');
    expect(ups.every((u) => u.hits === 0)).toBe(true);
    const served = await get('https-app', '/', { 'x-forwarded-proto': 'https' });
    expect(served.status).toBe(200);
    expect(served.body).toBe('alpha');
    expect(served.headers['strict-transport-security']).toBe('max-age=31536000');
    // Off: plain HTTP is served.
    r.app('http-app', ups);
    expect((await get('http-app')).status).toBe(200);
  });

  it('503 page when the app has no running web container', async () => {
    r.app('empty-app', []);
    const res = await get('empty-app');
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('No web container is running for empty-app');
    expect(res.headers['x-scalingo-error']).toContain('No web container');
    const rec = await until(() => r.records.find((x) => x.appName === 'empty-app'), 'the 503 record');
    expect(rec).toMatchObject({ status: 503, container: null, method: 'GET', path: '/' });
  });

  it('404 page for an unknown app or a host naming no app, and no record', async () => {
    const unknown = await get('nope-app');
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^text\/html/);
    expect(unknown.body).toContain('No such app');
    expect(unknown.body).toContain('nope-app');
    const bare = await send(r.port, { host: `localhost:${r.port}` });
    expect(bare.status).toBe(404);
    expect(bare.body).toContain('.localhost');
    const ip = await send(r.port, { host: `127.0.0.1:${r.port}` });
    expect(ip.status).toBe(404);
    expect(r.records).toEqual([]);
  });

  it('a Host cannot inject markup into the pages', async () => {
    r.app('empty-app', []);
    const res = await send(r.port, { host: '<b>x</b>.localhost' });
    expect(res.status).toBe(404);
    expect(res.body).not.toContain('<b>');
  });

  it('records status, duration and container of every request', async () => {
    r.app('rec-app', ups.slice(0, 1));
    await get('rec-app', '/a?b=1', { 'user-agent': 'rec-agent' });
    const rec = await until(() => r.records.find((x) => x.appName === 'rec-app'), 'the record');
    expect(rec).toMatchObject({
      appId: 'id-rec-app',
      status: 200,
      method: 'GET',
      path: '/a?b=1',
      container: 'web-1',
      bytes: 5,
      clientIp: '127.0.0.1',
      userAgent: 'rec-agent',
      host: `rec-app.localhost:${r.port}`,
    });
    expect(rec.durationMs).toBeGreaterThanOrEqual(0);
    expect(typeof rec.durationMs).toBe('number');
    expect(rec.time).toBeGreaterThan(0);
    expect(rec.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('router logs: one access line per request only when router_logs is on', async () => {
    r.app('quiet-app', ups.slice(0, 1));
    r.app('loud-app', ups.slice(0, 1), { routerLogs: true });
    await get('quiet-app');
    await until(() => r.records.find((x) => x.appName === 'quiet-app'), 'the quiet record');
    expect(r.lines.filter((l) => l.appId === 'id-quiet-app')).toEqual([]);

    const res = await get('loud-app', '/p?q="x"', { 'user-agent': 'agent "quoted"', referer: 'http://ref.test/' });
    const entry = await until(() => r.lines.find((l) => l.appId === 'id-loud-app'), 'the access line');
    expect(entry.container).toBe('web-1');
    expect(entry.line).toMatch(
      new RegExp(
        `^method=GET path="/p\\?q=\\\\"x\\\\"" host=loud-app\\.localhost:${r.port} request_id=${res.headers['x-request-id']} container=web-1 ` +
          `from="127\\.0\\.0\\.1" protocol=http status=200 duration=\\d+\\.\\d{3}s bytes=5 referer="http://ref\\.test/" user_agent="agent \\\\"quoted\\\\""$`,
      ),
    );
    // The router's own answers are logged too.
    r.app('loud-empty', [], { routerLogs: true });
    await get('loud-empty');
    const empty = await until(() => r.lines.find((l) => l.appId === 'id-loud-empty'), 'the 503 line');
    expect(empty.line).toContain('container=- ');
    expect(empty.line).toContain('status=503');
  });
});
