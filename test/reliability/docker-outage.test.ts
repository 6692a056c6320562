// A Docker outage as the emulator sees it (issue #10, defects 4 and 5): the emulator talks to the
// engine through a proxy socket (socat) that the test kills and restarts; the real dockerd is never
// touched, and the app's container keeps printing a counter throughout. During the outage container
// endpoints answer 503 and change nothing while the rest works; once the proxy is back, logs
// (every line once, compared with `docker logs`), stats sampling and engine events resume by
// themselves, without an emulator restart.

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FAST, waitForStatus } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';
import { logsUrl, messageOf, readLogs } from '../support/logs.ts';

const ENGINE_SOCKET = process.env.DOCKER_HOST?.startsWith('unix://')
  ? process.env.DOCKER_HOST.slice(7)
  : '/var/run/docker.sock';

/** socat in its own process group: killing the group also cuts the connections its children relay. */
async function startProxy(socket: string): Promise<ChildProcess> {
  const p = spawn('socat', [`UNIX-LISTEN:${socket},fork,unlink-early`, `UNIX-CONNECT:${ENGINE_SOCKET}`], {
    detached: true,
    stdio: 'ignore',
  });
  p.on('error', () => undefined);
  await eventually(() => existsSync(socket), { what: 'the proxy socket' });
  return p;
}

function killProxy(p: ChildProcess): void {
  try {
    process.kill(-p.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

describe('Docker outage through a proxy socket', () => {
  it('503 for container endpoints meanwhile (nothing recorded); logs, stats and events resume after it, every line once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emu-outage-'));
    const socket = join(dir, 'docker.sock');
    const appDir = join(dir, 'app');
    mkdirSync(appDir);
    writeFileSync(
      join(appDir, 'Procfile'),
      'web: mkdir -p /tmp/www && echo ok > /tmp/www/index.html && httpd -p $PORT -h /tmp/www && i=0 && while true; do i=$((i+1)); echo tick-$i; sleep 0.05; done\n',
    );
    let proxy = await startProxy(socket);
    let h: Harness | undefined;
    let instance = '';
    const figures: string[] = [];
    try {
      h = await startEmulator({
        docker: { socketPath: socket, stopContainersOnExit: false },
        intervals: { ...FAST, statsSampleMs: 1000 },
        apps: [{ name: 'outage-app', dir: appDir }],
      });
      instance = h.emu.instanceId;
      const hh = h;
      await waitForStatus(hh, 'outage-app', 'running');
      const app = (await hh.call('GET', '/v1/apps/outage-app')).body.app;
      const [web] = dockerPs([`${LABELS.instance}=${instance}`, `${LABELS.appId}=${app.id}`, `${LABELS.type}=web`]);
      const url = await logsUrl(hh, 'outage-app');
      const history = async () => (await readLogs(url, { n: 10_000, filter: 'web' })).lines.map(messageOf);
      await eventually(async () => (await history()).length >= 20, { what: 'lines before the outage' });
      const before = {
        formation: (await hh.call('GET', '/v1/apps/outage-app/containers')).body.containers,
        deployments: (await hh.call('GET', '/v1/apps/outage-app/deployments')).body.deployments.length,
        events: (await hh.call('GET', '/v1/apps/outage-app/events?per_page=100')).body.events.length,
      };

      // The engine goes away (for the emulator): the proxy and every connection it relays die.
      killProxy(proxy);
      const down = Date.now();
      await eventually(async () => (await hh.call('GET', '/v1/apps/outage-app/ps')).status === 503, {
        what: 'ps to answer 503',
      });
      figures.push(`outage seen by ps after ${Date.now() - down} ms`);
      const refused = [
        await hh.call('POST', '/v1/apps/outage-app/scale', { body: { containers: [{ name: 'web', amount: 2 }] } }),
        await hh.call('POST', '/v1/apps/outage-app/restart', { body: {} }),
        await hh.call('POST', '/v1/apps/outage-app/deployments', {
          body: { deployment: { source_url: join(dir, 'any.tar.gz') } },
        }),
        await hh.call('POST', '/v1/apps/outage-app/run', { body: { command: 'true', detached: true } }),
        await hh.call('GET', '/v1/apps/outage-app/stats'),
      ];
      for (const r of refused) {
        expect(r.status, r.text).toBe(503);
        expect(r.body).toEqual({ error: expect.stringMatching(/Docker engine cannot be reached/) });
      }
      // Nothing was recorded: same formation, no deployment, no scale/restart/run event.
      expect((await hh.call('GET', '/v1/apps/outage-app/containers')).body.containers).toEqual(before.formation);
      expect((await hh.call('GET', '/v1/apps/outage-app/deployments')).body.deployments.length).toBe(
        before.deployments,
      );
      expect((await hh.call('GET', '/v1/apps/outage-app/events?per_page=100')).body.events.length).toBe(before.events);
      // The rest works.
      expect((await hh.call('GET', '/v1/apps/outage-app')).status).toBe(200);
      expect(
        (
          await hh.call('POST', '/v1/apps/outage-app/variables', {
            body: { variable: { name: 'DURING_OUTAGE', value: '1' } },
          })
        ).status,
      ).toBe(201);
      expect((await readLogs(url, { n: 5 })).status).toBe(200);
      const health = await hh.call('GET', '/_emulator/health', { as: null });
      expect(health.body).toMatchObject({ subsystems: { docker: { status: 'unavailable' } } });
      // The container keeps printing meanwhile (Docker holds the lines).
      const printedDuringOutage = docker('logs', web.id).split('\n').filter(Boolean).length;
      await eventually(() => docker('logs', web.id).split('\n').filter(Boolean).length >= printedDuringOutage + 40, {
        what: 'lines printed during the outage',
      });

      // The engine is back.
      proxy = await startProxy(socket);
      const up = Date.now();
      const printedAtReturn = docker('logs', web.id).split('\n').filter(Boolean).length;
      await eventually(async () => (await hh.call('GET', '/v1/apps/outage-app/ps')).status === 200, {
        what: 'ps to answer again',
      });
      figures.push(`ps back ${Date.now() - up} ms after the engine`);
      await eventually(async () => (await history()).length >= printedAtReturn, {
        timeoutMs: 30_000,
        what: 'the lines printed during the outage',
      });
      figures.push(`logs caught up ${Date.now() - up} ms after the engine`);
      const recorded = docker('logs', web.id).split('\n').filter(Boolean);
      const got = await eventually(
        async () => {
          const lines = await history();
          return lines.length >= recorded.length ? lines : null;
        },
        { what: 'the emulator to catch up with docker logs' },
      );
      expect(got.slice(0, recorded.length)).toEqual(recorded);
      const numbers = got.map((l) => Number(l.split('-')[1]));
      expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));
      figures.push(`${numbers.length} lines, none lost or doubled`);

      // Stats sampling resumed (a sample taken after the return), and the realtime stats answer.
      const samplesSince = (t: number) =>
        hh.emu.db
          .prepare('SELECT COUNT(*) FROM stats_samples WHERE app_id = ? AND time > ?')
          .pluck()
          .get(app.id, t) as number;
      await eventually(() => samplesSince(up) > 0, { what: 'a stats sample after the outage' });
      figures.push(`stats sampled again ${Date.now() - up} ms after the engine`);
      expect((await hh.call('GET', '/v1/apps/outage-app/stats')).status).toBe(200);

      // Engine events flow again: a container killed behind the emulator's back is a crash, replaced.
      const crashes = async () =>
        (await hh.call('GET', '/v1/apps/outage-app/events?per_page=100')).body.events.filter(
          (e: { type: string }) => e.type === 'crash',
        ).length;
      expect(await crashes()).toBe(0);
      const killedAt = Date.now();
      docker('kill', web.id);
      await eventually(async () => (await crashes()) === 1, { what: 'the crash event' });
      figures.push(`crash seen ${Date.now() - killedAt} ms after docker kill`);
      await eventually(
        () =>
          dockerPs([`${LABELS.instance}=${instance}`, `${LABELS.appId}=${app.id}`, `${LABELS.type}=web`]).some(
            (c) => c.id !== web.id && c.state === 'running',
          ),
        { what: 'the replacement container' },
      );
      // Accepted again: a scale is recorded once the engine answers.
      expect(
        (await hh.call('POST', '/v1/apps/outage-app/scale', { body: { containers: [{ name: 'web', amount: 1 }] } }))
          .status,
      ).not.toBe(503);
    } finally {
      console.log(`[reliability] docker outage: ${figures.join('; ')}`);
      await h?.stop();
      killProxy(proxy);
      if (instance) {
        removeInstance(instance);
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
