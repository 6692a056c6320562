import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import {
  archiveOf,
  copyFixture,
  FAST,
  gitRepoOf,
  routerGet,
  waitForDeployment,
  waitForStatus,
} from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// Code reaches apps three ways — a watched directory, git_source, an archive — and runs in real containers.
const webOf = (h: Harness, app: string) =>
  dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.appName}=${app}`, `${LABELS.type}=web`]);
const answerOf = async (engineId: string) => {
  const port = docker('port', engineId, '5000').split(':').pop();
  return (await fetch(`http://127.0.0.1:${port}/`)).text();
};

describe('deploying code (real Docker)', () => {
  let h: Harness;
  const watched = copyFixture('busybox-web');
  beforeAll(async () => {
    h = await startEmulator({ intervals: FAST, apps: [{ name: 'watched-app', dir: watched }] });
  });
  afterAll(async () => {
    await h.stop();
    removeInstance(h.emu.instanceId);
    rmSync(watched, { recursive: true, force: true });
  });

  it('a directory bound in the config is created, deployed and served from a real container', async () => {
    const app = await waitForStatus(h, 'watched-app', 'running');
    expect(app.last_deployment_id).toBeTruthy();
    const web = webOf(h, 'watched-app');
    expect(web).toHaveLength(1);
    expect(await answerOf(web[0].id)).toBe('version 1 from web-1\n');
    // …and through the router at the app's url.
    expect(app.url).toBe(`http://watched-app.localhost:${h.emu.urls.routerPort}`);
    expect((await routerGet(h.emu.urls.routerPort, 'watched-app')).body).toBe('version 1 from web-1\n');
    const deployments = await h.call('GET', '/v1/apps/watched-app/deployments');
    expect(deployments.body.deployments[0]).toMatchObject({
      status: 'success',
      type: 'deployment',
      pusher: { username: 'dev' },
    });
    const output = await h.call('GET', `/v1/apps/watched-app/deployments/${deployments.body.deployments[0].id}/output`);
    expect(output.text).toContain('Process types: web');
    expect((await h.call('GET', '/v1/apps/watched-app/containers')).body.containers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'web', amount: 1, size: 'M' }),
        expect.objectContaining({ name: 'worker', amount: 0 }),
      ]),
    );
  });

  it('editing a watched file redeploys: booting, then the new content from a new container', async () => {
    const before = webOf(h, 'watched-app')[0].id;
    writeFileSync(join(watched, 'index.html'), 'version 2 from CONTAINER_NAME\n');
    await waitForStatus(h, 'watched-app', 'booting', 10_000);
    await waitForStatus(h, 'watched-app', 'running');
    const web = webOf(h, 'watched-app');
    expect(web).toHaveLength(1);
    expect(web[0].id).not.toBe(before);
    expect(await answerOf(web[0].id)).toBe('version 2 from web-1\n');
    const list = await h.call('GET', '/v1/apps/watched-app/deployments');
    expect(list.body.deployments.map((d: { status: string }) => d.status).slice(0, 2)).toEqual(['success', 'success']);
    const events = await h.call('GET', '/v1/apps/watched-app/events');
    expect(events.body.events.filter((e: { type: string }) => e.type === 'deployment')).toHaveLength(2);
  });

  it('links.deployments_stream streams a deployment: auth message, then new, log lines and status', async () => {
    const { WebSocket } = await import('ws');
    const app = (await h.call('GET', '/v1/apps/watched-app')).body.app;
    const bad = new WebSocket(app.links.deployments_stream);
    await new Promise((ok) => bad.once('open', ok));
    bad.send(JSON.stringify({ type: 'auth', data: { token: 'not-a-bearer' } }));
    const closed = await new Promise<number>((ok) => bad.once('close', (code) => ok(code)));
    expect(closed).toBe(4003);

    const ws = new WebSocket(app.links.deployments_stream);
    const messages: { type: string; id?: string; data: Record<string, unknown> }[] = [];
    ws.on('message', (m) => messages.push(JSON.parse(String(m))));
    await new Promise((ok) => ws.once('open', ok));
    ws.send(JSON.stringify({ type: 'auth', data: { token: await h.bearer() } }));
    await eventually(() => messages.some((m) => m.type === 'status'), { what: 'replay of the last deployment' });
    const replayed = messages.length;
    writeFileSync(join(watched, 'index.html'), 'version 3 from CONTAINER_NAME\n');
    const status = await eventually(
      () => messages.slice(replayed).find((m) => m.type === 'status' && m.data.status === 'success'),
      { timeoutMs: 60_000, what: 'success status' },
    );
    const live = messages.slice(replayed);
    const created = live.find((m) => m.type === 'new')!;
    expect(created.data.deployment).toBe(status.id);
    expect(
      live
        .filter((m) => m.type === 'log' && m.id === status.id)
        .map((m) => m.data.content)
        .join(''),
    ).toContain('Application deployed');
    expect(live.filter((m) => m.type === 'status').map((m) => m.data.status)).toEqual([
      'building',
      'pushing',
      'starting',
      'success',
    ]);
    ws.close();
    await waitForStatus(h, 'watched-app', 'running');
  });

  it('a failed build is a failed deployment with its output kept; the running version stays', async () => {
    const before = webOf(h, 'watched-app')[0].id;
    rmSync(join(watched, 'Procfile'));
    const failed = await waitForDeployment(h, 'watched-app', (d) => d.status === 'build-error');
    const out = await h.call('GET', `/v1/apps/watched-app/deployments/${failed.id}/output`);
    expect(out.text).toMatch(/no Procfile found/);
    await waitForStatus(h, 'watched-app', 'running');
    expect(webOf(h, 'watched-app').map((c) => c.id)).toEqual([before]);
    expect(await answerOf(before)).toBe('version 3 from web-1\n');
  });

  it('git_source on creation deploys from a local git repository', async () => {
    const repo = gitRepoOf('busybox-web');
    const res = await h.call('POST', '/v1/apps', {
      body: { app: { name: 'from-git-app', git_source: `file://${repo}` } },
    });
    expect(res.status).toBe(201);
    await waitForStatus(h, 'from-git-app', 'running');
    expect(await answerOf(webOf(h, 'from-git-app')[0].id)).toBe('version 1 from web-1\n');
    rmSync(repo, { recursive: true, force: true });
  });

  it('POST /deployments with an archive (local path) builds a Dockerfile app', async () => {
    await h.call('POST', '/v1/apps', { body: { app: { name: 'from-archive' } } });
    const archive = await archiveOf('dockerfile-web');
    const res = await h.call('POST', '/v1/apps/from-archive/deployments', {
      body: { deployment: { source_url: archive, git_ref: 'v1' } },
    });
    expect(res.status).toBe(201);
    expect(res.body.deployment).toMatchObject({ status: 'queued', git_ref: 'v1', type: 'archive' });
    const done = await waitForDeployment(h, 'from-archive');
    expect(done.status).toBe('success');
    expect(await answerOf(webOf(h, 'from-archive')[0].id)).toBe('built from a Dockerfile\n');
    const shown = await h.call('GET', `/v1/apps/from-archive/deployments/${res.body.deployment.id}`);
    expect(shown.body.deployment.links.output).toContain(`/deployments/${res.body.deployment.id}/output`);
  });

  it('a web process that exits before listening fails the deployment; the output shows its last lines', async () => {
    const dir = copyFixture('busybox-web');
    writeFileSync(
      join(dir, 'Procfile'),
      'web: echo "connecting to db:5432"; echo "boot failed: getaddrinfo ENOTFOUND db" >&2; exit 3\n',
    );
    const archive = await archiveOf('crashing-web', dir);
    await h.call('POST', '/v1/apps', { body: { app: { name: 'crashing-web' } } });
    const res = await h.call('POST', '/v1/apps/crashing-web/deployments', {
      body: { deployment: { source_url: archive } },
    });
    expect(res.status).toBe(201);
    const done = await waitForDeployment(h, 'crashing-web');
    const out = (await h.call('GET', `/v1/apps/crashing-web/deployments/${done.id}/output`)).text;
    expect(done.status, out).toBe('crashed-error');
    expect(out).toContain('Start failed: container web-1 exited with code 3 before listening on $PORT');
    // stdout and stderr are two streams: their lines may come back in either order.
    expect(out).toContain('       | connecting to db:5432\n');
    expect(out).toContain('       | boot failed: getaddrinfo ENOTFOUND db\n');
    expect(webOf(h, 'crashing-web')).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
    rmSync(dirname(archive), { recursive: true, force: true });
  });

  it('an archive over http(s) is downloaded', async () => {
    const { createServer } = await import('node:http');
    const { readFileSync } = await import('node:fs');
    const archive = await archiveOf('busybox-web');
    const srv = createServer((_q, r) => r.end(readFileSync(archive))).listen(0, '127.0.0.1');
    await new Promise((ok) => srv.once('listening', ok));
    const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}/code.tar.gz`;
    await h.call('POST', '/v1/apps', { body: { app: { name: 'from-http-archive' } } });
    expect(
      (await h.call('POST', '/v1/apps/from-http-archive/deployments', { body: { deployment: { source_url: url } } }))
        .status,
    ).toBe(201);
    expect((await waitForDeployment(h, 'from-http-archive')).status).toBe('success');
    srv.close();
  });

  it('refuses bad deployment requests', async () => {
    expect((await h.call('POST', '/v1/apps/from-archive/deployments', { body: {} })).body).toEqual({
      errors: { deployment: ['missing field'] },
    });
    expect(
      (await h.call('POST', '/v1/apps/from-archive/deployments', { body: { deployment: { source_url: 'ftp://x' } } }))
        .status,
    ).toBe(422);
    expect(
      (
        await h.call('POST', '/v1/apps/nope-nope/deployments', {
          body: { deployment: { source_url: '/tmp/x.tar.gz' } },
        })
      ).status,
    ).toBe(404);
    expect((await h.call('GET', '/v1/apps/from-archive/deployments/nope')).body).toEqual({
      resource: 'deployment',
      error: 'not found',
    });
    await h.call('POST', '/v1/apps', { body: { app: { name: 'bad-archive' } } });
    await h.call('POST', '/v1/apps/bad-archive/deployments', {
      body: { deployment: { source_url: '/nonexistent/code.tar.gz' } },
    });
    const d = await waitForDeployment(h, 'bad-archive');
    expect(d.status).toBe('build-error');
    expect((await h.call('GET', '/v1/apps/bad-archive')).body.app.status).toBe('new');
  });

  it('deleting an app removes its containers and images', async () => {
    const before = webOf(h, 'from-archive');
    expect(before).toHaveLength(1);
    expect((await h.call('DELETE', '/v1/apps/from-archive?current_name=from-archive')).status).toBe(204);
    expect(dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.appName}=from-archive`], true)).toEqual([]);
    await eventually(
      () =>
        docker('images', '-q', '--filter', `label=${LABELS.appId}`)
          .split('\n')
          .every(
            (id) =>
              !id ||
              !docker(
                'image',
                'inspect',
                '-f',
                '{{index .Config.Labels "io.scalingo-emulator.app-name"}}',
                id,
              ).includes('from-archive'),
          ),
      { what: 'images gone' },
    );
  });
});
