import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeStatsRuntime } from '../support/fake-stats-runtime.ts';
import { type Receiver, startReceiver } from '../support/webhook-receiver.ts';

// The alert engine, step by step on a manual clock: each sampleOnce() is one sample round at clock time.
const WEBHOOK = '5982f145d48c3600273ef08a';
const EMAIL = '59c52ac27651ce002c1d4620';
const MIN = 60_000;
const NS_PER_MS = 1e6;

describe('alert engine', () => {
  let h: Harness;
  let rx: Receiver;
  const clock = new ManualClock(Date.parse('2030-02-01T08:00:00.000Z'));
  const rt = new FakeStatsRuntime();

  beforeAll(async () => {
    h = await startEmulator({}, { runtime: rt, clock });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await h.stop();
    await rx.close();
  });

  /** An app with web containers and a webhook notifier; returns what the scenario needs. */
  async function scenario(name: string, cpus: number[]) {
    const app = (await h.call('POST', '/v1/apps', { body: { app: { name } } })).body.app;
    const engineIds = cpus.map((cpu, i) => {
      const id = rt.add({ instanceId: h.emu.instanceId, appId: app.id, appName: name, type: 'web', index: i + 1 });
      rt.set(id, { cpu });
      return id;
    });
    const hook = (
      await h.call('POST', `/v1/apps/${name}/notifiers`, {
        body: { notifier: { platform_id: WEBHOOK, name: 'hook', type_data: { webhook_url: rx.url } } },
      })
    ).body.notifier;
    const alert = async (fields: Record<string, unknown>) => {
      const res = await h.call('POST', `/v1/apps/${name}/alerts`, {
        body: { alert: { container_type: 'web', notifiers: [hook.id], ...fields } },
      });
      expect(res.status).toBe(201);
      return res.body.alert;
    };
    const alertEvents = async () =>
      ((await h.call('GET', `/v1/apps/${name}/events?per_page=100`)).body.events as any[])
        .filter((e) => e.type === 'alert')
        .reverse();
    const received = () => rx.bodies.filter((b) => b.app_name === name && b.type === 'alert');
    return { app, engineIds, alert, alertEvents, received };
  }
  const round = async (advanceMs = MIN) => {
    clock.advance(advanceMs);
    await h.emu.area('monitoring').sampleOnce();
  };

  it('fires after duration_before_trigger, notifies the webhook, reminds every remind_every, resolves when back', async () => {
    const s = await scenario('engine-cpu', [0.9, 0.7]);
    await s.alert({ metric: 'cpu', limit: 0.5, duration_before_trigger: 2 * MIN * NS_PER_MS, remind_every: '5m0s' });
    await round(0); // beyond since now
    await round(); // 1 min beyond: not yet
    expect(await s.alertEvents()).toEqual([]);
    await round(); // 2 min: fires
    const [fired] = await s.alertEvents();
    expect(fired).toMatchObject({
      app_name: 'engine-cpu',
      user: { username: 'scalingo-platform' },
      type_data: {
        sender_name: 'web',
        metric: 'cpu',
        limit: 0.5,
        limit_text: '50%',
        value: 0.8,
        value_text: '80%',
        activated: true,
        send_when_below: false,
        raw_limit: 50,
        raw_value: 80,
      },
    });
    const got = await eventually(() => s.received()[0], { what: 'webhook notification' });
    expect(got).toMatchObject({
      id: fired.id,
      type: 'alert',
      app_id: s.app.id,
      type_data: { activated: true, metric: 'cpu' },
      user: { username: 'scalingo-platform' },
    });

    await round(); // 1 min after firing: no reminder yet
    await round(3 * MIN);
    expect(await s.alertEvents()).toHaveLength(1);
    await round(); // 5 min after firing: reminder
    expect((await s.alertEvents()).map((e) => e.type_data.activated)).toEqual([true, true]);

    rt.set(s.engineIds[0], { cpu: 0.1 });
    rt.set(s.engineIds[1], { cpu: 0.2 });
    await round();
    const events = await s.alertEvents();
    expect(events.map((e) => e.type_data.activated)).toEqual([true, true, false]);
    expect(events[2].type_data.value).toBeCloseTo(0.15, 10);
    await eventually(() => s.received().length === 3, { what: 'three notifications' });
    expect(s.received().map((b) => b.type_data.activated)).toEqual([true, true, false]);
    await round(10 * MIN);
    expect(await s.alertEvents()).toHaveLength(3); // resolved alerts stay quiet
  });

  it('judges the mean over the type, not one container', async () => {
    const s = await scenario('engine-mean', [0.9, 0.0]);
    await s.alert({ metric: 'cpu', limit: 0.5 });
    await round();
    await round();
    expect(await s.alertEvents()).toEqual([]);
  });

  it('send_when_below fires on an idle type; a disabled alert never fires', async () => {
    const s = await scenario('engine-below', [0, 0]);
    await s.alert({ metric: 'cpu', limit: 0.05, send_when_below: true });
    await s.alert({ metric: 'memory', limit: 0.001, disabled: true }); // memory is far above 0.1 %: would fire
    await round();
    const events = await s.alertEvents();
    expect(events).toHaveLength(1);
    expect(events[0].type_data).toMatchObject({ metric: 'cpu', send_when_below: true, activated: true });
    await round(5 * MIN);
    expect((await s.alertEvents()).map((e) => e.type_data.metric)).toEqual(['cpu']);
  });

  it('router metrics: requests and 5XX of the last minute, rpm per container', async () => {
    const s = await scenario('engine-router', [0, 0]);
    await s.alert({ metric: 'all', limit: 4 });
    await s.alert({ metric: 'rpm_per_container', limit: 3 });
    await s.alert({ metric: '5XX', limit: 2 });
    await s.alert({ metric: 'p95_response_time', limit: 1000 });
    clock.advance(MIN);
    for (let i = 0; i < 5; i++)
      h.emu.area('monitoring').recordRouterRequest({
        appId: s.app.id,
        time: clock.now() - 1000,
        status: i < 2 ? 503 : 200,
        durationMs: 40,
        container: 'web-1',
      });
    await round(0);
    const fired = (await s.alertEvents()).map((e) => [e.type_data.metric, e.type_data.value]);
    // 5 requests ≥ 4; 5 / 2 containers = 2.5 < 3; 2 errors ≥ 2; p95 40 ms < 1000 ms.
    expect(fired.sort()).toEqual([
      ['5XX', 2],
      ['all', 5],
    ]);
    await round(); // the minute passed: no traffic, both resolve
    expect((await s.alertEvents()).filter((e) => !e.type_data.activated)).toHaveLength(2);
  });

  it('notifiers taking every alert get them too; e-mail ones write to the outbox', async () => {
    const s = await scenario('engine-mail', [0.95]);
    const mail = (
      await h.call('POST', '/v1/apps/engine-mail/notifiers', {
        body: {
          notifier: {
            platform_id: EMAIL,
            name: 'ops',
            send_all_alerts: true,
            type_data: { emails: ['ops@example.test'] },
          },
        },
      })
    ).body.notifier;
    await s.alert({ metric: 'cpu', limit: 0.5 });
    await round();
    const file = h.emu.area('monitoring').outboxFile;
    const line = await eventually(
      async () => {
        await h.emu.area('monitoring').drainOutbox();
        if (!existsSync(file)) return undefined;
        return readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
          .find((l) => l.notifier_id === mail.id);
      },
      { what: 'alert e-mail' },
    );
    expect(line).toMatchObject({
      to: ['ops@example.test'],
      event: { type: 'alert', app_name: 'engine-mail', type_data: { activated: true } },
    });
    expect(line.subject).toBe('[engine-mail] High cpu on web triggered (value: 95%, limit: 50%)');
  });

  it('a type with no running container is not judged', async () => {
    const s = await scenario('engine-none', [0.9]);
    await s.alert({ metric: 'cpu', limit: 0.5, container_type: 'worker' });
    await round();
    expect(await s.alertEvents()).toEqual([]);
  });
});
