import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { startEmulator } from '../harness.ts';
import { archiveOf, copyFixture, FAST, waitForOperation, waitForStatus } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

describe('app lifecycle (real Docker)', () => {
  it('a container that keeps crashing is restarted with back-off, then the app is `crashed`', async () => {
    const dir = copyFixture('crash-worker');
    const h = await startEmulator({ intervals: FAST, apps: [{ name: 'crashy-app', dir }] });
    try {
      await waitForStatus(h, 'crashy-app', 'running');
      const res = await h.call('POST', '/v1/apps/crashy-app/scale', {
        body: { containers: [{ name: 'worker', amount: 1 }] },
      });
      await waitForOperation(h, res.headers.get('location')!);
      // Each crash is seen by Docker (exit 7) and restarted as a new container, until 12 in a row are exceeded.
      await waitForStatus(h, 'crashy-app', 'crashed', 90_000);
      const events = (await h.call('GET', '/v1/apps/crashy-app/events?per_page=100')).body.events;
      const crashes = events.filter((e: { type: string }) => e.type === 'crash');
      expect(crashes.length).toBe(13);
      expect(crashes[0].type_data).toMatchObject({
        container_type: 'worker',
        exit_code: 7,
        crash_logs: expect.stringContaining('worker crashing'),
      });
      expect(events[0].type).toBe('repeated_crash');
      // The CLI prints "(logs on <logs_url>)" and "<user (email)>": a real signed logs URL, the platform's user.
      expect(crashes[0].user).toMatchObject({ username: 'scalingo-platform', email: expect.stringContaining('@') });
      expect(crashes[0].type_data.logs_url).toMatch(/\/apps\/crashy-app\/logs\?token=.+&filter=worker-/);
      const crashLogs = await fetch(crashes[0].type_data.logs_url);
      expect(crashLogs.status).toBe(200);
      expect(await crashLogs.text()).toContain('worker crashing');
      // Nothing restarts it any more: no worker runs in Docker.
      await eventually(
        () => dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.type}=worker`]).length === 0,
        { what: 'no worker running' },
      );
      // A restart is a way out: the counter starts again.
      const restart = await h.call('POST', '/v1/apps/crashy-app/restart', { body: { scope: ['web'] } });
      expect(restart.status).toBe(202);
      await waitForOperation(h, restart.headers.get('location')!);
      expect(['running', 'crashed']).toContain((await h.call('GET', '/v1/apps/crashy-app')).body.app.status);
    } finally {
      await h.stop();
      removeInstance(h.emu.instanceId);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);

  it('restarted while containers run, the emulator reconciles: lost containers recreated, orphans removed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'emu-reconcile-'));
    const dir = copyFixture('busybox-web');
    const cfg = { inMemory: false, dataDir, intervals: FAST, apps: [{ name: 'kept-app', dir }] };
    const first = await startEmulator(cfg);
    const instance = first.emu.instanceId;
    const filter = [`${LABELS.instance}=${instance}`, `${LABELS.appName}=kept-app`, `${LABELS.type}=web`];
    try {
      await waitForStatus(first, 'kept-app', 'running');
      const scale = await first.call('POST', '/v1/apps/kept-app/scale', {
        body: { containers: [{ name: 'web', amount: 2 }] },
      });
      await waitForOperation(first, scale.headers.get('location')!);
      const before = dockerPs(filter)
        .map((c) => c.id)
        .sort();
      expect(before).toHaveLength(2);
      await first.stop();
      // Containers keep running across an emulator stop (docker.stopContainersOnExit is off by default).
      expect(
        dockerPs(filter)
          .map((c) => c.id)
          .sort(),
      ).toEqual(before);
      // While it is down: one container disappears, and a stranger with our instance label appears.
      docker('rm', '-f', before[0]);
      const orphan = docker(
        'run',
        '-d',
        '--label',
        `${LABELS.managed}=1`,
        '--label',
        `${LABELS.instance}=${instance}`,
        '--label',
        `${LABELS.appName}=kept-app`,
        DEFAULT_STACK_IMAGE,
        'sleep',
        '600',
      );

      const second = await startEmulator(cfg);
      try {
        expect(second.emu.instanceId).toBe(instance);
        const after = dockerPs(filter).map((c) => c.id);
        expect(after).toHaveLength(2);
        expect(after).toContain(before[1]); // the survivor is kept as is
        expect(dockerPs([`${LABELS.instance}=${instance}`], true).map((c) => c.id)).not.toContain(orphan);
        const ps = (await second.call('GET', '/v1/apps/kept-app/ps')).body.containers;
        expect(
          ps
            .filter((c: { state: string }) => c.state === 'running')
            .map((c: { type_index: number }) => c.type_index)
            .sort(),
        ).toEqual([1, 2]);
        expect((await second.call('GET', '/v1/apps/kept-app')).body.app.status).toBe('running');
      } finally {
        await second.stop();
      }
    } finally {
      removeInstance(instance);
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('an app deleted while its containers start leaves nothing running in Docker', async () => {
    const dir = copyFixture('busybox-web');
    const h = await startEmulator({ intervals: FAST, apps: [{ name: 'doomed-app', dir }] });
    const instance = h.emu.instanceId;
    try {
      await waitForStatus(h, 'doomed-app', 'running');
      const appId = (await h.call('GET', '/v1/apps/doomed-app')).body.app.id;
      const byApp = [`${LABELS.instance}=${instance}`, `${LABELS.appId}=${appId}`];
      // The scale answers 202 at once and starts 4 containers in the background: the delete lands mid-way.
      const scale = await h.call('POST', '/v1/apps/doomed-app/scale', {
        body: { containers: [{ name: 'web', amount: 5 }] },
      });
      expect(scale.status).toBe(202);
      const del = await h.call('DELETE', '/v1/apps/doomed-app?current_name=doomed-app');
      expect(del.status).toBe(204);
      expect(dockerPs(byApp, true)).toEqual([]);
      // A start that was under way must not bring a container back once the delete answered.
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline) {
        expect(dockerPs(byApp, true)).toEqual([]);
        await new Promise((r) => setTimeout(r, 250));
      }
      expect((await h.call('GET', '/v1/apps/doomed-app')).status).toBe(404);
    } finally {
      await h.stop();
      removeInstance(instance);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('an app deleted while it deploys: the DELETE waits for the build, then its image goes too', async () => {
    const h = await startEmulator({ intervals: FAST });
    const instance = h.emu.instanceId;
    try {
      // A deployment in progress: the DELETE waits for it, then its image goes with the app.
      await h.call('POST', '/v1/apps', { body: { app: { name: 'deploying-app' } } });
      const deployingId = (await h.call('GET', '/v1/apps/deploying-app')).body.app.id;
      const dep = await h.call('POST', '/v1/apps/deploying-app/deployments', {
        body: { deployment: { source_url: await archiveOf('busybox-web') } },
      });
      expect(dep.status).toBe(201);
      expect((await h.call('DELETE', '/v1/apps/deploying-app?current_name=deploying-app')).status).toBe(204);
      const leftOf = (appId: string) => ({
        containers: dockerPs([`${LABELS.instance}=${instance}`, `${LABELS.appId}=${appId}`], true),
        images: docker('images', '-q', '--filter', `label=${LABELS.appId}=${appId}`),
      });
      // The build would have ended within these seconds: its image must not appear afterwards.
      for (const until = Date.now() + 4000; Date.now() < until; await new Promise((r) => setTimeout(r, 250))) {
        expect(leftOf(deployingId)).toEqual({ containers: [], images: '' });
      }

      // Nothing of it can start again: its name answers 404.
      expect(
        (await h.call('POST', '/v1/apps/deploying-app/scale', { body: { containers: [{ name: 'web', amount: 1 }] } }))
          .status,
      ).toBe(404);
    } finally {
      await h.stop();
      removeInstance(instance);
    }
  }, 90_000);

  it('an app deleted while a crashed container is being restarted: no container left, no crash recorded for the deletion', async () => {
    // The worker runs 3 s then exits 7; each restart stays in its boot check for 2.5 s (bootGraceMs):
    // a DELETE sent once the restarted container shows in Docker lands while that restart is under way.
    const dir = copyFixture('crash-worker');
    writeFileSync(
      join(dir, 'Procfile'),
      'web: mkdir -p /tmp/www && echo ok > /tmp/www/index.html && exec httpd -f -p $PORT -h /tmp/www\nworker: sleep 3; exit 7\n',
    );
    const h = await startEmulator({
      intervals: { ...FAST, bootGraceMs: 2500 },
      apps: [{ name: 'crash-loop-app', dir }],
    });
    const instance = h.emu.instanceId;
    try {
      await waitForStatus(h, 'crash-loop-app', 'running');
      const crashId = (await h.call('GET', '/v1/apps/crash-loop-app')).body.app.id;
      const scale = await h.call('POST', '/v1/apps/crash-loop-app/scale', {
        body: { containers: [{ name: 'worker', amount: 1 }] },
      });
      await waitForOperation(h, scale.headers.get('location')!);
      const workers = [`${LABELS.instance}=${instance}`, `${LABELS.appId}=${crashId}`, `${LABELS.type}=worker`];
      const first = dockerPs(workers)[0].id;
      // Read from the events table: the API no longer shows a deleted app's unattributed events.
      const crashes = async () =>
        h.emu.db
          .prepare("SELECT COUNT(*) FROM events WHERE app_id = ? AND type = 'crash'")
          .pluck()
          .get(crashId) as number;
      // The first worker crashed and its replacement runs in Docker (still in its boot check).
      await eventually(async () => (await crashes()) === 1 && dockerPs(workers).some((c) => c.id !== first), {
        intervalMs: 50,
        what: 'the worker crashing and its restart starting',
      });
      expect((await h.call('DELETE', '/v1/apps/crash-loop-app?current_name=crash-loop-app')).status).toBe(204);
      const byApp = [`${LABELS.instance}=${instance}`, `${LABELS.appId}=${crashId}`];
      for (const until = Date.now() + 3000; Date.now() < until; await new Promise((r) => setTimeout(r, 250))) {
        expect(dockerPs(byApp, true)).toEqual([]);
      }
      expect(await crashes()).toBe(1);
    } finally {
      await h.stop();
      removeInstance(instance);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('with the Docker engine down: container endpoints answer 503, the rest works, health says so', async () => {
    const h = await startEmulator({ docker: { socketPath: '/nonexistent/docker.sock', stopContainersOnExit: false } });
    try {
      await h.call('POST', '/v1/apps', { body: { app: { name: 'no-docker-app' } } });
      const ps = await h.call('GET', '/v1/apps/no-docker-app/ps');
      expect(ps.status).toBe(503);
      expect(ps.body).toEqual({ error: expect.stringMatching(/Docker engine cannot be reached/) });
      expect((await h.call('GET', '/v1/apps/no-docker-app')).status).toBe(200);
      const health = await h.call('GET', '/_emulator/health', { as: null });
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({
        status: 'degraded',
        subsystems: { database: { status: 'ok' }, docker: { status: 'unavailable', error: expect.any(String) } },
      });
    } finally {
      await h.stop();
    }
  });
});
