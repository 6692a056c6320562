import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';

// The manual clock (`clock: "manual"`): time moves only through POST /_emulator/clock/advance, and
// everything time-based follows it — bearer and URL expiry, alert rounds, logs rotation by age.
// Operations timing out on it need a container: test/docker/control-clock.test.ts.
const ADMIN = 'admin-token-for-clock-0000000000';
const HOUR = 3600_000;

describe('control plane: manual clock', () => {
  let h: Harness;
  const admin = (method: string, path: string, body?: unknown) =>
    h.call(method, `/_emulator${path}`, { body, as: { bearer: ADMIN } });
  const advance = async (ms: number) => {
    const res = await admin('POST', '/clock/advance', { ms });
    expect(res.status).toBe(200);
    return res.body.clock as { mode: string; now: string };
  };

  beforeAll(async () => {
    h = await startEmulator({ adminToken: ADMIN, clock: 'manual' });
  });
  afterAll(() => h.stop());

  it('GET /clock tells the mode and the time; advance moves it by exactly ms', async () => {
    const before = (await admin('GET', '/clock')).body.clock;
    expect(before).toEqual({ mode: 'manual', now: expect.any(String) });
    const after = await advance(90_000);
    expect(Date.parse(after.now) - Date.parse(before.now)).toBe(90_000);
    expect(h.emu.area('control').control.clock.now()).toBe(Date.parse(after.now));
    // Real time passing does not move it.
    await new Promise((r) => setTimeout(r, 50));
    expect((await admin('GET', '/clock')).body.clock.now).toBe(after.now);
  });

  it('a bearer token expires once the clock passes its hour', async () => {
    const bearer = await h.bearer();
    expect((await h.call('GET', '/v1/users/self', { as: { bearer } })).status).toBe(200);
    await advance(HOUR - 60_000);
    expect((await h.call('GET', '/v1/users/self', { as: { bearer } })).status).toBe(200);
    await advance(60_001);
    const res = await h.call('GET', '/v1/users/self', { as: { bearer } });
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/expired/);
  });

  it('a logs_url expires after logs.urlTtlMs of clock time', async () => {
    await h.call('POST', '/v1/apps', { body: { app: { name: 'clock-logs' } } });
    const url = (await h.call('GET', '/v1/apps/clock-logs/logs')).body.logs_url as string;
    expect([200, 204]).toContain((await fetch(url)).status);
    await advance(24 * HOUR + 1000);
    const res = await fetch(url);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/expired/) });
  });

  it('logs history rotates into an archive by age when the clock passes historyMaxAgeMs', async () => {
    const app = (await h.call('POST', '/v1/apps', { body: { app: { name: 'clock-archive' } } })).body.app;
    for (let i = 0; i < 5; i++) h.emu.area('logs').append(app.id, 'web-1', `old line ${i}`);
    await h.emu.area('logs').pipeline.idle();
    expect((await h.call('GET', '/v1/apps/clock-archive/logs_archives')).body.archives).toEqual([]);
    await advance(24 * HOUR + 20_000); // past the age bound, and a maintenance tick after it
    const archives = (await h.call('GET', '/v1/apps/clock-archive/logs_archives')).body.archives;
    expect(archives).toHaveLength(1);
  });

  it('an alert fires once the clock passed its duration_before_trigger, then reminds every remind_every', async () => {
    await h.call('POST', '/v1/apps', { body: { app: { name: 'clock-alert' } } });
    // No router traffic: requests per minute stay at 0, below the limit.
    const created = await h.call('POST', '/v1/apps/clock-alert/alerts', {
      body: {
        alert: {
          container_type: 'web',
          metric: 'all',
          limit: 100,
          send_when_below: true,
          duration_before_trigger: '3m0s',
          remind_every: '10m0s',
        },
      },
    });
    expect(created.status).toBe(201);
    const fired = async () =>
      (
        (await h.call('GET', '/v1/apps/clock-alert/events')).body.events as {
          type: string;
          type_data: { activated: boolean };
        }[]
      ).filter((e) => e.type === 'alert');
    await advance(60_000); // first sample round: below the limit from now on
    await new Promise((r) => setTimeout(r, 300));
    expect(await fired()).toEqual([]);
    await advance(60_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(await fired()).toEqual([]); // 1 minute below: not yet
    await advance(3 * 60_000);
    const first = await eventually(async () => ((await fired()).length === 1 ? await fired() : null), {
      what: 'the alert to fire',
      timeoutMs: 10_000,
    });
    expect(first[0].type_data.activated).toBe(true);
    await advance(10 * 60_000);
    await eventually(async () => (await fired()).length === 2, { what: 'the reminder', timeoutMs: 10_000 });
  });

  it('advance failure paths: bad ms → 422, other keys → 422, malformed JSON → 400', async () => {
    for (const body of [
      { ms: 0 },
      { ms: -5 },
      { ms: 1.5 },
      { ms: 'x' },
      {},
      { ms: 10, extra: 1 },
      { ms: 101 * 366 * 24 * HOUR }, // past the bound of 100 years
    ]) {
      const res = await admin('POST', '/clock/advance', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors).toBeDefined();
    }
    expect((await h.call('POST', '/_emulator/clock/advance', { raw: '{"ms":', as: { bearer: ADMIN } })).status).toBe(
      400,
    );
    expect(() => h.emu.area('control').control.clock.advance(0)).toThrow();
  });

  it('with the system clock: GET says so, advance → 422', async () => {
    const sys = await startEmulator({ adminToken: ADMIN });
    try {
      const get = await sys.call('GET', '/_emulator/clock', { as: { bearer: ADMIN } });
      expect(get.body.clock.mode).toBe('system');
      expect(Math.abs(Date.parse(get.body.clock.now) - Date.now())).toBeLessThan(60_000);
      const res = await sys.call('POST', '/_emulator/clock/advance', { body: { ms: 1000 }, as: { bearer: ADMIN } });
      expect(res.status).toBe(422);
      expect(res.body.errors.clock[0]).toMatch(/manual/);
    } finally {
      await sys.stop();
    }
  });
});
