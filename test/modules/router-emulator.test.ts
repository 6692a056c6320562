import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Upstream } from '../../src/router/proxy.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { send, startUpstream, type TestUpstream, until } from './router.helpers.ts';

// The router as the emulator wires it: apps from the database, settings read at each request,
// events to emulator-level listeners. Web containers are stubbed through the `upstreams` option.
describe('router in the emulator', () => {
  let h: Harness;
  let up: TestUpstream;
  const served = new Map<string, Upstream[]>(); // app id → its stubbed web containers
  beforeEach(async () => {
    up = await startUpstream('stub-web');
    h = await startEmulator({}, { upstreams: (appId) => served.get(appId) ?? [] });
  });
  afterEach(async () => {
    await h.stop();
    await up.close();
    served.clear();
  });
  const routed = (app: string, headers: Record<string, string> = {}) =>
    send(h.emu.urls.routerPort, { host: `${app}.localhost:${h.emu.urls.routerPort}`, headers });

  it('a created app with no container answers 503 at its url', async () => {
    const created = await h.call('POST', '/v1/apps', { body: { app: { name: 'router-app' } } });
    expect(created.status).toBe(201);
    expect(created.body.app.url).toBe(`http://router-app.localhost:${h.emu.urls.routerPort}`);
    expect(created.body.app.base_url).toBe(created.body.app.url);
    const res = await routed('router-app');
    expect(res.status).toBe(503);
    expect(res.body).toContain('No web container is running for router-app');
    expect((await routed('missing-app')).status).toBe(404);
  });

  it('serves the app through its web containers and applies settings changed through the API at once', async () => {
    const app = (await h.call('POST', '/v1/apps', { body: { app: { name: 'served-app' } } })).body.app;
    served.set(app.id, [{ containerName: 'web-1', port: up.port }]);
    expect(await routed('served-app')).toMatchObject({ status: 200, body: 'stub-web' });

    const lines: string[] = [];
    const records: number[] = [];
    const offLine = h.emu
      .area('servers')
      .routerEvents.onAccessLog((appId, line) => appId === app.id && lines.push(line));
    const offRecord = h.emu
      .area('servers')
      .routerEvents.onRequest((rec) => rec.appId === app.id && records.push(rec.status));

    expect((await h.call('PATCH', '/v1/apps/served-app', { body: { app: { force_https: true } } })).status).toBe(200);
    const redirect = await routed('served-app');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('https://served-app.localhost/');
    await until(() => records.includes(301), 'the 301 record');
    expect(lines).toEqual([]); // router_logs still off

    await h.call('PATCH', '/v1/apps/served-app', {
      body: { app: { force_https: false, router_logs: true, sticky_session: true } },
    });
    const res = await routed('served-app');
    expect(res.status).toBe(200);
    expect(res.headers['set-cookie']?.[0]).toMatch(/^sc-sticky-session=/);
    const line = await until(() => lines[0], 'the access line');
    expect(line).toMatch(
      /^method=GET path="\/" host=served-app\.localhost:\d+ request_id=\S+ container=web-1 .*status=200 /,
    );

    // Unsubscribed listeners hear nothing more. The access line is emitted with the record, so once a
    // still-subscribed listener has the record, a line would already be there.
    offLine();
    offRecord();
    let after = 0;
    h.emu.area('servers').routerEvents.onRequest((rec) => rec.appId === app.id && after++);
    await routed('served-app');
    await until(() => after === 1, 'the next record');
    expect(lines).toHaveLength(1);
    expect(records).toEqual([301, 200]);
  });
});
