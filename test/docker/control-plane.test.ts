import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, gitRepoOf, waitForOperation, waitForStatus } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeByLabel, removeImagesByLabel } from '../support/docker-cli.ts';
import { createApp, logsUrl, openWs } from '../support/logs.ts';

// The control plane against real containers, observed in Docker: workload faults (crash, oom,
// log_delay), snapshot/restore reconciled with the engine, and a reset that leaves nothing running.
const ADMIN = 'admin-token-for-docker-000000000';

describe('control plane with real containers', () => {
  let h: Harness;
  const dir = copyFixture('busybox-web');
  const admin = (method: string, path: string, body?: unknown) =>
    h.call(method, `/_emulator${path}`, { body, as: { bearer: ADMIN } });
  const instance = () => `${LABELS.instance}=${h.emu.instanceId}`;
  const webs = () => dockerPs([instance(), `${LABELS.appName}=ctl-app`, `${LABELS.type}=web`]);
  const psWeb = async () =>
    (
      (await h.call('GET', '/v1/apps/ctl-app/ps')).body.containers as {
        type: string;
        type_index: number;
        state: string;
      }[]
    ).filter((c) => c.type === 'web');
  const crashes = async () =>
    (
      (await h.call('GET', '/v1/apps/ctl-app/events?per_page=100')).body.events as {
        type: string;
        type_data: Record<string, unknown>;
      }[]
    ).filter((e) => e.type === 'crash');
  const scaleWeb = async (amount: number) => {
    const res = await h.call('POST', '/v1/apps/ctl-app/scale', { body: { containers: [{ name: 'web', amount }] } });
    expect(res.status).toBe(202);
    expect((await waitForOperation(h, res.headers.get('location')!)).status).toBe('done');
  };

  beforeAll(async () => {
    h = await startEmulator({ adminToken: ADMIN, intervals: FAST, apps: [{ name: 'ctl-app', dir }] });
    await waitForStatus(h, 'ctl-app', 'running');
  });
  afterAll(async () => {
    await h.stop();
    removeByLabel(instance());
    removeImagesByLabel(instance());
    rmSync(dir, { recursive: true, force: true });
  });

  /** Kills web-1 through a fault; returns the crash event once the emulator recorded it and web-1 runs again. */
  async function killWeb1(type: 'crash' | 'oom') {
    const [before] = webs();
    const seen = (await crashes()).length;
    const res = await admin('POST', '/faults', { fault: { type, app: 'ctl-app', container: 'web-1' } });
    expect(res.status).toBe(201);
    expect(res.body.fault).toMatchObject({
      id: expect.stringMatching(/^flt-/),
      type,
      app: 'ctl-app',
      container: 'web-1',
      applied: 1,
    });
    // Docker: the container died (exited, then removed by the emulator's crash handling)…
    await eventually(
      () => ['exited', undefined].includes(dockerPs([instance()], true).find((c) => c.id === before.id)?.state),
      { what: 'web-1 to die in Docker' },
    );
    const event = await eventually(async () => ((await crashes()).length > seen ? (await crashes())[0] : null), {
      what: 'the crash event',
    });
    // …and a new web-1 runs (a new engine container), which ps shows running.
    const after = await eventually(() => webs().find((c) => c.id !== before.id && c.state === 'running'), {
      what: 'web-1 restarted',
      timeoutMs: 30_000,
    });
    expect(docker('inspect', '-f', `{{index .Config.Labels "${LABELS.index}"}}`, after.id)).toBe('1');
    await eventually(async () => (await psWeb()).some((c) => c.type_index === 1 && c.state === 'running'), {
      what: 'ps to show web-1 running',
    });
    // The fault acted once: it is not kept.
    expect((await admin('GET', '/faults')).body.faults).toEqual([]);
    return event;
  }

  it('crash: web-1 dies in Docker (exit 137), the crash is recorded and the container restarted', async () => {
    const event = await killWeb1('crash');
    expect(event.type_data).toMatchObject({ container_type: 'web', container: 'web-1', exit_code: 137 });
    expect(event.type_data.oom_killed).toBeUndefined();
  });

  it('oom: web-1 is killed as out-of-memory: a crash event saying so, then a restart', async () => {
    const event = await killWeb1('oom');
    expect(event.type_data).toMatchObject({
      container_type: 'web',
      container: 'web-1',
      exit_code: 137,
      oom_killed: true,
      crash_logs: expect.stringContaining('Out of memory'),
    });
  });

  it('log_delay: container lines reach a logs stream no sooner than log_delay_ms after Docker got them', async () => {
    const app = await createApp(h, 'ctl-logs');
    const engineId = (
      await h.emu.runtime.run({
        name: `emu-${h.emu.instanceId}-ctl-ticker`,
        image: DEFAULT_STACK_IMAGE,
        cmd: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo tick-$i; sleep 0.2; done'],
        env: {},
        labels: {
          [LABELS.instance]: h.emu.instanceId,
          [LABELS.appId]: app.id,
          [LABELS.appName]: app.name,
          [LABELS.type]: 'worker',
          [LABELS.index]: '1',
        },
        memoryBytes: 64 * 1024 * 1024,
      })
    ).engineId;
    const ws = await openWs(await logsUrl(h, 'ctl-logs'));
    try {
      await eventually(() => ws.lines.length > 2, { what: 'live lines before the fault' });
      const res = await admin('POST', '/faults', { fault: { log_delay_ms: 1500, app: 'ctl-logs' } });
      expect(res.body.fault).toMatchObject({ type: 'log_delay', log_delay_ms: 1500 });
      const addedAt = Date.now();
      const arrival = new Map<string, number>();
      await eventually(
        () => {
          for (const l of ws.lines) {
            const tick = /tick-\d+/.exec(l)?.[0];
            if (tick && !arrival.has(tick)) arrival.set(tick, Date.now());
          }
          return arrival.size > 15;
        },
        { intervalMs: 20, timeoutMs: 20_000, what: 'delayed lines' },
      );
      // Docker's own timestamps of the same lines: each one that came after the fault reached the stream late.
      const stamps = docker('logs', '-t', engineId)
        .split('\n')
        .map((l) => ({ at: Date.parse(l.slice(0, l.indexOf(' '))), tick: l.slice(l.indexOf(' ') + 1).trim() }));
      const late = stamps.filter((s) => s.at > addedAt + 100 && arrival.has(s.tick));
      expect(late.length).toBeGreaterThan(3);
      for (const s of late) expect(arrival.get(s.tick)! - s.at, s.tick).toBeGreaterThanOrEqual(1400);
    } finally {
      ws.close();
      await admin('DELETE', '/faults');
      await h.emu.runtime.remove(engineId);
    }
  });

  it('docker_unavailable on a deployed app: scale and restart answer 503 and record nothing; after it, both work again', async () => {
    expect((await admin('POST', '/faults', { fault: { type: 'docker_unavailable', seconds: 2 } })).status).toBe(201);
    for (const [path, body] of [
      ['/scale', { containers: [{ name: 'web', amount: 3 }] }],
      ['/restart', { scope: ['web'] }],
    ] as const) {
      const res = await h.call('POST', `/v1/apps/ctl-app${path}`, { body });
      expect(res.status, path).toBe(503);
      expect(res.body).toEqual({ error: expect.stringContaining('Docker') });
    }
    expect((await h.call('GET', '/v1/apps/ctl-app/containers')).body.containers).toContainEqual(
      expect.objectContaining({ name: 'web', amount: 1 }),
    );
    expect(webs()).toHaveLength(1); // the engine itself was never touched
    await eventually(async () => (await h.call('GET', '/v1/apps/ctl-app/ps')).status === 200, {
      what: 'the engine back',
      timeoutMs: 15_000,
    });
  });

  it('snapshot/restore: the restored formation is what Docker runs (containers removed, then recreated)', async () => {
    expect(webs()).toHaveLength(1);
    const one = (await admin('POST', '/snapshots')).body.snapshot.id as string;
    await scaleWeb(2);
    expect(webs()).toHaveLength(2);
    const two = (await admin('POST', '/snapshots')).body.snapshot.id as string;
    const kept = webs();

    expect((await admin('POST', `/snapshots/${one}/restore`)).status).toBe(204);
    expect(webs()).toHaveLength(1);
    expect((await psWeb()).map((c) => c.type_index)).toEqual([1]);
    expect((await h.call('GET', '/v1/apps/ctl-app/containers')).body.containers).toContainEqual(
      expect.objectContaining({ name: 'web', amount: 1 }),
    );

    expect((await admin('POST', `/snapshots/${two}/restore`)).status).toBe(204);
    const now = webs();
    expect(now).toHaveLength(2);
    expect(now.filter((c) => kept.some((k) => k.id === c.id))).toHaveLength(1); // web-1 kept, web-2 made again
    expect((await psWeb()).map((c) => `${c.type_index}:${c.state}`).sort()).toEqual(['1:running', '2:running']);
    const answers = await Promise.all(
      now.map(async (c) => (await fetch(`http://${docker('port', c.id, '5000')}/`)).text()),
    );
    expect(answers.sort()).toEqual(['version 1 from web-1\n', 'version 1 from web-2\n']);
  });

  it('restore removes what came after the snapshot: an app deployed since loses its containers and its image', async () => {
    const snap = (await admin('POST', '/snapshots')).body.snapshot.id as string;
    const repo = gitRepoOf('busybox-web');
    try {
      expect(
        (await h.call('POST', '/v1/apps', { body: { app: { name: 'ctl-later', git_source: `file://${repo}` } } }))
          .status,
      ).toBe(201);
      await waitForStatus(h, 'ctl-later', 'running', 90_000);
      const later = [`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.appName}=ctl-later`];
      expect(dockerPs(later)).toHaveLength(1);
      const image = docker('inspect', '-f', '{{.Config.Image}}', dockerPs(later)[0].id);
      expect(docker('images', '-q', image)).not.toBe('');

      expect((await admin('POST', `/snapshots/${snap}/restore`)).status).toBe(204);
      expect(dockerPs(later, true)).toEqual([]);
      expect(docker('images', '-q', image)).toBe('');
      expect((await h.call('GET', '/v1/apps/ctl-later')).status).toBe(404);
      expect(webs()).toHaveLength(2); // ctl-app as it was
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('reset: every container and image of the instance leaves Docker; the API is empty', async () => {
    expect(dockerPs([instance()]).length).toBeGreaterThan(0);
    expect(docker('images', '-q', '--filter', `label=${instance()}`)).not.toBe('');
    expect((await admin('POST', '/reset')).status).toBe(204);
    expect(dockerPs([instance()], true)).toEqual([]);
    expect(docker('images', '-q', '--filter', `label=${instance()}`)).toBe('');
    expect((await h.call('GET', '/v1/apps')).body.apps).toEqual([]);
  });
});
