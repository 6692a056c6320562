import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FakeStatsRuntime, MiB } from '../support/fake-stats-runtime.ts';

// Known figures through a fake engine and a manual clock: series, means, router metrics and
// recommended values can be checked exactly. The real-Docker proof is test/docker/stats.test.ts.
const T0 = Date.parse('2030-01-01T10:00:00.000Z');

describe('stats #23–#25 from known samples and router records', () => {
  let h: Harness;
  const clock = new ManualClock(T0);
  const rt = new FakeStatsRuntime();
  let appId: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    h = await startEmulator({}, { runtime: rt, clock });
    // The sampler's timer runs on the (manual) clock: stopped, so rounds happen only when driven by hand.
    await h.emu.area('monitoring').sampler.stop();
    const res = await h.call('POST', '/v1/apps', { body: { app: { name: 'stats-app' } } });
    appId = res.body.app.id;
    for (const index of [1, 2])
      ids[`web-${index}`] = rt.add({ instanceId: h.emu.instanceId, appId, appName: 'stats-app', type: 'web', index });
    // Another emulator's container on the same engine is never sampled.
    rt.add({ instanceId: 'someone-else', appId, type: 'web', index: 9 });

    rt.set(ids['web-1'], { cpu: 0.2, memoryUsage: 100 * MiB, swapUsage: 128 * MiB });
    rt.set(ids['web-2'], { cpu: 0.6, memoryUsage: 300 * MiB, swapUsage: 0 });
    await h.emu.area('monitoring').sampleOnce();
    clock.advance(60_000);
    rt.set(ids['web-1'], { cpu: 1.0, memoryUsage: 200 * MiB, swapUsage: 128 * MiB });
    rt.set(ids['web-2'], { cpu: 0.5, memoryUsage: 200 * MiB, swapUsage: 128 * MiB });
    await h.emu.area('monitoring').sampleOnce();

    const rec = (dt: number, status: number, durationMs: number) =>
      h.emu.area('monitoring').recordRouterRequest({ appId, time: T0 + dt, status, durationMs, container: 'web-1' });
    rec(10_000, 200, 10);
    rec(11_000, 200, 20);
    rec(12_000, 500, 300);
    rec(70_000, 200, 50);
    rec(71_000, 404, 70);
    clock.advance(4 * 60_000); // now = T0 + 5 min
  });
  afterAll(() => h.stop());

  const get = (path: string) => h.call('GET', `/v1/apps/stats-app/stats${path}`);

  it('#23 cpu (percent) and memory (bytes) are means over the type per bucket, or one container with an index', async () => {
    const cpu = await get('/cpu/web?since=1');
    expect(cpu.status).toBe(200);
    expect(cpu.body).toEqual([
      { time: '2030-01-01T10:00:00.000Z', value: 40 },
      { time: '2030-01-01T10:01:00.000Z', value: 75 },
    ]);
    expect((await get('/memory/web?since=1')).body.map((p: { value: number }) => p.value)).toEqual([
      200 * MiB,
      200 * MiB,
    ]);
    expect((await get('/memory/web/2?since=1')).body.map((p: { value: number }) => p.value)).toEqual([
      300 * MiB,
      200 * MiB,
    ]);
    expect((await get('/cpu/web/1?since=1')).body.map((p: { value: number }) => p.value)).toEqual([20, 100]);
    expect((await get('/swap/web?since=1')).body.map((p: { value: number }) => p.value)).toEqual([64 * MiB, 128 * MiB]);
    // No type: every container of the app.
    expect((await get('/cpu?since=1')).body).toHaveLength(2);
  });

  it('#23 router: requests per minute, zeros where there were none, filtered by status_code', async () => {
    const all = await get('/router?since=1');
    expect(all.status).toBe(200);
    expect(all.body.map((p: { value: number }) => p.value)).toEqual([3, 2, 0, 0, 0, 0]);
    expect(all.body[0].time).toBe('2030-01-01T10:00:00.000Z');
    expect((await get('/router?since=1&status_code=5XX')).body.map((p: { value: number }) => p.value)).toEqual([
      1, 0, 0, 0, 0, 0,
    ]);
    expect(
      (await get('/router?since=1&status_code=4xx')).body.map((p: { value: number }) => p.value).slice(0, 2),
    ).toEqual([0, 1]);
    // container and index are ignored for router.
    expect((await get('/router/worker/7?since=1')).body).toEqual(all.body);
  });

  it('#23 failure paths: unknown metric, type or index → 404 in the spec’s shape; bad since/status_code → 422', async () => {
    expect((await get('/disk/web')).body).toEqual({ resource: 'metric', error: 'not found' });
    expect((await get('/cpu/worker')).body).toEqual({ resource: 'container_type', error: 'not found' });
    expect((await get('/cpu/web/3')).body).toEqual({ resource: 'container', error: 'not found' });
    expect((await get('/cpu/web/abc')).status).toBe(404);
    expect((await get('/cpu/web/0')).status).toBe(404);
    const since = await get('/cpu/web?since=two');
    expect(since.status).toBe(422);
    expect(since.body.errors.since).toBeDefined();
    expect((await get('/router?status_code=6XX')).body.errors.status_code).toBeDefined();
    expect((await h.call('GET', '/v1/apps/stats-app/stats/cpu/web', { as: 'other' })).status).toBe(404);
    expect((await h.call('GET', '/v1/apps/stats-app/stats/cpu/web', { as: null })).status).toBe(401);
    // The reference's unprefixed path form is not served (docs/fidelity.md).
    expect((await h.call('GET', '/v1/stats/cpu/web')).status).toBe(404);
  });

  it('#25 recommended values from the recorded history, dated at midnight UTC', async () => {
    const rv = async (q: string) => (await get(`/${q}`)).body;
    expect(await rv('cpu/recommended_value?container_type=web')).toEqual({
      time: '2030-01-01T00:00:00.000Z',
      value: 0.9,
    });
    expect((await rv('memory/recommended_value?container_type=web')).value).toBe(0.9);
    // swap: per-minute means of the swap fraction (limit = memory limit when the engine gives none): 0.125, 0.25.
    expect((await rv('swap/recommended_value?container_type=web')).value).toBeCloseTo(0.1875, 10);
    expect((await rv('all/recommended_value')).value).toBe(2.5); // 3 and 2 requests in the two busy minutes
    expect((await rv('5XX/recommended_value')).value).toBe(0.5); // 1 and 0
    expect((await rv('rpm_per_container/recommended_value')).value).toBe(1.25); // 3/2 and 2/2
    expect((await rv('p95_response_time/recommended_value')).value).toBe(185); // p95s 300 and 70 ms
  });

  it('#25 failure paths', async () => {
    const missing = await get('/cpu/recommended_value');
    expect(missing.status).toBe(422);
    expect(missing.body.errors.container_type[0]).toMatch(/missing field/);
    expect((await get('/swap/recommended_value?container_type=worker')).body).toEqual({
      resource: 'container_type',
      error: 'not found',
    });
    expect((await get('/router/recommended_value')).body).toEqual({ resource: 'metric', error: 'not found' });
  });

  it('#24 real-time figures for every running container, cpu_usage an integer percent; none once stopped', async () => {
    rt.set(ids['web-1'], { cpu: 0.123, memoryUsage: 50 * MiB, memoryMaxUsage: 60 * MiB });
    const res = await get('');
    expect(res.status).toBe(200);
    expect(res.body.stats.map((s: { id: string }) => s.id)).toEqual(['web-1', 'web-2']);
    expect(res.body.stats[0]).toEqual({
      id: 'web-1',
      cpu_usage: 12,
      memory_usage: 50 * MiB,
      memory_limit: 512 * MiB,
      highest_memory_usage: 200 * MiB, // the highest the sampler saw
      swap_usage: 128 * MiB,
      swap_limit: 512 * MiB,
      highest_swap_usage: 128 * MiB,
    });
    rt.exit(ids['web-1']);
    rt.exit(ids['web-2']);
    expect((await get('')).body).toEqual({ stats: [] });
  });

  it('#23 longer windows are cut in ~200 buckets of whole minutes: 48 h gives the reference sample’s 14-minute spacing', async () => {
    clock.advance(3_600_000);
    const long = (await get('/router?since=48')).body;
    expect(long.length).toBeGreaterThan(3);
    for (let i = 1; i < long.length; i++)
      expect(Date.parse(long[i].time) - Date.parse(long[i - 1].time)).toBe(14 * 60_000);
    // Values stay requests per minute: 5 requests in all.
    expect(long.reduce((n: number, p: { value: number }) => n + p.value * 14, 0)).toBeCloseTo(5, 10);
  });
});
