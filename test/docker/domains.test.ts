import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, waitForStatus } from '../support/apps.ts';
import { docker, dockerPs, removeInstance } from '../support/docker-cli.ts';

// A deployed app's real web container answers on its custom domains through the router (Host header, as a
// browser sends for http://shop.localhost:<port>/), and other hosts are redirected to the canonical one.
const viaRouter = (port: number, host: string, path = '/') =>
  new Promise<{ status: number; body: string; location?: string }>((ok, fail) => {
    const req = request(
      { host: '127.0.0.1', port, path, headers: { host: `${host}:${port}` }, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => ok({ status: res.statusCode ?? 0, body, location: res.headers.location }));
      },
    );
    req.on('error', fail);
    req.end();
  });

describe('custom domains (real Docker)', () => {
  let h: Harness;
  const dir = copyFixture('busybox-web');
  beforeAll(async () => {
    h = await startEmulator({ intervals: FAST, apps: [{ name: 'domain-app', dir }] });
    await waitForStatus(h, 'domain-app', 'running');
  });
  afterAll(async () => {
    if (h) {
      await h.stop();
      removeInstance(h.emu.instanceId);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the web container on its custom domains and redirects to the canonical one', async () => {
    const [web] = dockerPs([
      `${LABELS.instance}=${h.emu.instanceId}`,
      `${LABELS.appName}=domain-app`,
      `${LABELS.type}=web`,
    ]);
    const direct = await (await fetch(`http://${docker('port', web!.id, '5000')}/`)).text();
    const port = h.emu.urls.routerPort;
    expect((await viaRouter(port, 'shop.localhost')).status).toBe(404);
    await h.call('POST', '/v1/apps/domain-app/domains', { body: { domain: { name: 'shop.localhost' } } });
    await h.call('POST', '/v1/apps/domain-app/domains', {
      body: { domain: { name: 'www.shop.localhost', canonical: true } },
    });
    expect(await viaRouter(port, 'www.shop.localhost')).toMatchObject({ status: 200, body: direct });
    expect(await viaRouter(port, 'shop.localhost', '/index.html?x=1')).toMatchObject({
      status: 301,
      location: `http://www.shop.localhost:${port}/index.html?x=1`,
    });
    expect((await viaRouter(port, 'domain-app.localhost')).location).toBe(`http://www.shop.localhost:${port}/`);
  });
});
