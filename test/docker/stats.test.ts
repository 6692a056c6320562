import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { type ContainerInfo, LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { docker, eventually, removeByLabel } from '../support/docker-cli.ts';
import { type Receiver, startReceiver } from '../support/webhook-receiver.ts';

// Real containers, real engine stats: a CPU burner, idle containers and one holding ~50 MB.
// They are made directly through the emulator's runtime with its labels (the containers module is
// not involved), sampled every 300 ms, and observed with the docker CLI.
const MiB = 1024 * 1024;
const APP = 'stats-docker';
const WAIT = { timeoutMs: 45_000, intervalMs: 300 };

describe('stats and alerts from real containers', () => {
  let h: Harness;
  let rx: Receiver;
  let appId: string;
  const c: Record<string, ContainerInfo> = {};

  const run = (type: string, index: number, script: string) =>
    h.emu.runtime.run({
      name: `emu-${h.emu.instanceId}-${APP}-${type}-${index}`,
      image: DEFAULT_STACK_IMAGE,
      cmd: ['sh', '-c', script],
      env: {},
      labels: {
        [LABELS.managed]: '1',
        [LABELS.instance]: h.emu.instanceId,
        [LABELS.appId]: appId,
        [LABELS.appName]: APP,
        [LABELS.type]: type,
        [LABELS.index]: String(index),
      },
      memoryBytes: 256 * MiB,
    });

  beforeAll(async () => {
    h = await startEmulator({
      intervals: { statsSampleMs: 300 },
      stats: { maxPoints: 1_000_000 },
      notifiers: { webhookBackoffMs: 50 },
    });
    rx = await startReceiver();
    appId = (await h.call('POST', '/v1/apps', { body: { app: { name: APP } } })).body.app.id;
    // The burner can be calmed down: `docker exec … kill $(cat /tmp/pid)` leaves it sleeping.
    c['web-1'] = await run('web', 1, 'mkdir -p /tmp; yes > /dev/null & echo $! > /tmp/pid; wait; exec sleep 3600');
    c['web-2'] = await run('web', 2, 'exec sleep 3600');
    // The string is scanned every second so its pages stay resident (some hosts reclaim idle pages).
    c['worker-1'] = await run(
      'worker',
      1,
      'x=$(head -c 50000000 /dev/zero | tr "\\0" a); while :; do case "$x" in *b*) ;; esac; sleep 1; done',
    );
    c['clock-1'] = await run('clock', 1, 'exec sleep 3600');
  });
  afterAll(async () => {
    await h?.stop();
    await rx?.close();
    if (h) removeByLabel(`${LABELS.instance}=${h.emu.instanceId}`);
  });

  const stats = async () => (await h.call('GET', `/v1/apps/${APP}/stats`)).body.stats as any[];
  const alertEvents = async () =>
    ((await h.call('GET', `/v1/apps/${APP}/events?per_page=100`)).body.events as any[]).filter(
      (e) => e.type === 'alert',
    );

  it('#24 reads the burn and the memory from Docker now, for every running container', async () => {
    const s = await eventually(
      async () => {
        const all = await stats();
        const by = Object.fromEntries(all.map((x) => [x.id, x]));
        return by['web-1']?.cpu_usage >= 25 && by['worker-1']?.memory_usage >= 40e6 ? by : undefined;
      },
      { ...WAIT, what: 'burning web-1 and a 50 MB worker-1' },
    );
    expect(Object.keys(s).sort()).toEqual(['clock-1', 'web-1', 'web-2', 'worker-1']);
    expect(Number.isInteger(s['web-1'].cpu_usage)).toBe(true);
    expect(s['web-2'].cpu_usage).toBeLessThan(10);
    expect(s['web-1'].memory_limit).toBe(256 * MiB);
    expect(s['worker-1'].highest_memory_usage).toBeGreaterThanOrEqual(s['worker-1'].memory_usage);
    expect(s['worker-1'].swap_limit).toBeGreaterThan(0);
    // Docker's own view agrees.
    expect(docker('inspect', '-f', '{{.HostConfig.Memory}}', c['web-1'].engineId)).toBe(String(256 * MiB));
    await eventually(
      () => parseFloat(docker('stats', '--no-stream', '--format', '{{.CPUPerc}}', c['web-1'].engineId)) > 25,
      { ...WAIT, what: 'docker stats: web-1 burning' },
    );
    expect(docker('stats', '--no-stream', '--format', '{{.MemUsage}}', c['worker-1'].engineId)).toMatch(
      /^\d+(\.\d+)?MiB/,
    );
  });

  it('#23 samples accumulate; the type series is the mean of its containers', async () => {
    const series = (p: string) =>
      h.call('GET', `/v1/apps/${APP}/stats/cpu/${p}?since=1`).then((r) => r.body as { time: string; value: number }[]);
    // Samples accumulate: two of the burner at work (on a loaded machine it may get less than a quarter of a core now and
    // then), and two sampling times where both web containers have a sample, so that the type's mean can be checked.
    const { m1, m2, both } = await eventually(
      async () => {
        const [all, w1, w2] = await Promise.all(['web', 'web/1', 'web/2'].map(series));
        const m1 = new Map(w1.map((p) => [p.time, p.value]));
        const m2 = new Map(w2.map((p) => [p.time, p.value]));
        const both = all.filter((p) => m1.has(p.time) && m2.has(p.time));
        return w1.filter((p) => p.value > 25).length >= 2 && both.length >= 2 ? { m1, m2, both } : undefined;
      },
      { ...WAIT, what: 'two samples of web-1 above 25 % of a core, and two sampling times shared by web-1 and web-2' },
    );
    for (const p of both) expect(p.value).toBeCloseTo((m1.get(p.time)! + m2.get(p.time)!) / 2, 9);
    const mem = (await h.call('GET', `/v1/apps/${APP}/stats/memory/worker?since=1`)).body as { value: number }[];
    expect(Math.max(...mem.map((p) => p.value))).toBeGreaterThanOrEqual(40e6);
  });

  it('alerts fire after their duration, notify the webhook, remind, resolve; below fires on idle; disabled never', async () => {
    const hook = (
      await h.call('POST', `/v1/apps/${APP}/notifiers`, {
        body: { notifier: { platform_id: '5982f145d48c3600273ef08a', name: 'rx', type_data: { webhook_url: rx.url } } },
      })
    ).body.notifier;
    const create = async (alert: Record<string, unknown>) => {
      const res = await h.call('POST', `/v1/apps/${APP}/alerts`, {
        body: { alert: { notifiers: [hook.id], ...alert } },
      });
      expect(res.status).toBe(201);
    };
    // web mean ≈ (burn + 0) / 2: beyond 0.1 while web-1 burns, even when the shared machine gives the burner only part of a core.
    await create({
      container_type: 'web',
      metric: 'cpu',
      limit: 0.1,
      duration_before_trigger: 1_500_000_000,
      remind_every: '1s',
    });
    await create({ container_type: 'clock', metric: 'cpu', limit: 0.05, send_when_below: true });
    await create({ container_type: 'worker', metric: 'memory', limit: 0.001, disabled: true });

    const fromHook = (metric: string, activated: boolean) =>
      rx.bodies.filter(
        (b) =>
          b.type === 'alert' &&
          b.type_data.metric === metric &&
          b.type_data.sender_name &&
          b.type_data.activated === activated,
      );
    await eventually(() => fromHook('cpu', true).some((b) => b.type_data.sender_name === 'web'), {
      ...WAIT,
      what: 'web cpu alert at the webhook',
    });
    const fired = (await alertEvents()).filter((e) => e.type_data.sender_name === 'web');
    expect(fired.at(-1)).toMatchObject({
      user: { username: 'scalingo-platform' },
      type_data: { metric: 'cpu', activated: true, limit: 0.1 },
    });
    expect(fired.at(-1).type_data.value).toBeGreaterThanOrEqual(0.1);
    // Reminders repeat while it stays beyond.
    await eventually(() => fromHook('cpu', true).filter((b) => b.type_data.sender_name === 'web').length >= 3, {
      ...WAIT,
      what: 'two reminders',
    });
    // The idle clock container is below 5 %.
    await eventually(
      () => fromHook('cpu', true).some((b) => b.type_data.sender_name === 'clock' && b.type_data.send_when_below),
      { ...WAIT, what: 'send_when_below alert' },
    );

    docker('exec', c['web-1'].engineId, 'sh', '-c', 'kill $(cat /tmp/pid)');
    const resolved = await eventually(() => fromHook('cpu', false).find((b) => b.type_data.sender_name === 'web'), {
      ...WAIT,
      what: 'resolution',
    });
    expect(resolved.type_data.value).toBeLessThan(0.1);
    expect(
      (await alertEvents()).some((e) => e.type_data.sender_name === 'web' && e.type_data.activated === false),
    ).toBe(true);
    // Many rounds later the disabled memory alert has never fired.
    expect((await alertEvents()).filter((e) => e.type_data.metric === 'memory')).toEqual([]);
  });

  it('router metrics count what the router answers for the app, filtered by status code', async () => {
    // The app has no container known to the router: it answers 503 itself, and records it.
    for (let i = 0; i < 3; i++) {
      const status = await new Promise<number>((ok, fail) => {
        const req = request(
          { host: '127.0.0.1', port: h.emu.urls.routerPort, path: '/', headers: { host: `${APP}.localhost` } },
          (res) => {
            res.resume();
            ok(res.statusCode!);
          },
        );
        req.on('error', fail).end();
      });
      expect(status).toBe(503);
    }
    const sum = (pts: { value: number }[]) => pts.reduce((n, p) => n + p.value, 0);
    const errors = await eventually(
      async () => {
        const pts = (await h.call('GET', `/v1/apps/${APP}/stats/router?since=1&status_code=5XX`)).body;
        return sum(pts) >= 3 ? pts : undefined;
      },
      { ...WAIT, what: '5XX requests per minute' },
    );
    expect(sum(errors)).toBe(3);
    expect(sum((await h.call('GET', `/v1/apps/${APP}/stats/router?since=1&status_code=2XX`)).body)).toBe(0);
    expect((await h.call('GET', `/v1/apps/${APP}/stats/5XX/recommended_value`)).body.value).toBe(3);
  });

  it('the sampler takes a container started after its first rounds and leaves one Docker stopped', async () => {
    // Each container is inspected once, in the first round that lists it (issue 40): what the rounds take must
    // still follow the engine's list as containers come and go.
    const times = async (type: string) =>
      ((await h.call('GET', `/v1/apps/${APP}/stats/memory/${type}?since=1`)).body as { time: string }[]).map((p) =>
        Date.parse(p.time),
      );
    expect((await times('clock')).length).toBeGreaterThan(0);
    docker('stop', '-t', '0', c['clock-1'].engineId);
    expect(docker('inspect', '-f', '{{.State.Status}}', c['clock-1'].engineId)).toBe('exited');
    const stoppedAt = Date.now();
    c['late-1'] = await run('late', 1, 'exec sleep 3600');
    expect(docker('inspect', '-f', '{{.State.Status}}', c['late-1'].engineId)).toBe('running');
    // Rounds never overlap: the second round dated after the stop began after it, so it listed clock-1 as stopped.
    const second = await eventually(
      async () => {
        const late = await times('late');
        const after = (await times('web')).filter((t) => t > stoppedAt).sort((a, b) => a - b);
        return after.length >= 2 && late.length > 0 ? after[1] : undefined;
      },
      { ...WAIT, what: 'two rounds after clock-1 stopped, and a sample of late-1' },
    );
    expect((await times('clock')).filter((t) => t >= second)).toEqual([]);
  });

  it('#24 a stopped app has an empty list, not an error', async () => {
    for (const x of Object.values(c)) await h.emu.runtime.remove(x.engineId);
    expect(await stats()).toEqual([]);
  });
});
