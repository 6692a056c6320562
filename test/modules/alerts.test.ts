import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { FakeStatsRuntime } from '../support/fake-stats-runtime.ts';

const WEBHOOK_PLATFORM = '5982f145d48c3600273ef08a';

describe('alerts #26–#30', () => {
  let h: Harness;
  let notifierId: string;
  beforeAll(async () => {
    h = await startEmulator({}, { runtime: new FakeStatsRuntime() });
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'alerts-app' } } })).status).toBe(201);
    const n = await h.call('POST', '/v1/apps/alerts-app/notifiers', {
      body: {
        notifier: {
          platform_id: WEBHOOK_PLATFORM,
          name: 'hook',
          type_data: { webhook_url: 'http://127.0.0.1:9/hook' },
        },
      },
    });
    expect(n.status).toBe(201);
    notifierId = n.body.notifier.id;
  });
  afterAll(() => h.stop());

  const create = (alert: unknown, as: 'dev' | 'other' = 'dev') =>
    h.call('POST', '/v1/apps/alerts-app/alerts', { body: { alert }, as });

  it('#27 creates an alert with every field in the shapes go-scalingo decodes, and records new_alert', async () => {
    const res = await create({
      container_type: 'web',
      metric: 'cpu',
      limit: 0.8,
      duration_before_trigger: 300000000000,
      remind_every: '1h',
      notifiers: [notifierId],
      metadata: { recipient: 'ops' },
    });
    expect(res.status).toBe(201);
    const a = res.body.alert;
    expect(a.id).toMatch(/^al-[0-9a-f-]{36}$/);
    expect(a).toMatchObject({
      container_type: 'web',
      metric: 'cpu',
      limit: 0.8,
      disabled: false,
      send_when_below: false,
      duration_before_trigger: 300000000000,
      remind_every: '1h0m0s',
      metadata: { recipient: 'ops' },
      notifiers: [notifierId],
    });
    expect(Number.isInteger(a.duration_before_trigger)).toBe(true);
    expect(a.created_at).toMatch(/\.\d{3}Z$/);
    const events = await h.call('GET', '/v1/apps/alerts-app/events?per_page=1');
    expect(events.body.events[0]).toMatchObject({
      type: 'new_alert',
      type_data: { container_type: 'web', metric: 'cpu', limit: 0.8, limit_text: '80%', send_when_below: false },
    });
  });

  it('#27 accepts the Go client’s full Alert body (zero dates, null metadata and notifiers)', async () => {
    const res = await create({
      id: '',
      app_id: '',
      container_type: 'worker',
      metric: 'memory',
      limit: 0.5,
      disabled: false,
      send_when_below: true,
      duration_before_trigger: 0,
      remind_every: '',
      created_at: '0001-01-01T00:00:00Z',
      updated_at: '0001-01-01T00:00:00Z',
      metadata: null,
      notifiers: null,
    });
    expect(res.status).toBe(201);
    expect(res.body.alert).toMatchObject({
      container_type: 'worker',
      metric: 'memory',
      send_when_below: true,
      remind_every: '',
      duration_before_trigger: 0,
      metadata: {},
      notifiers: [],
    });
  });

  it('#26 lists and #28 shows', async () => {
    const list = await h.call('GET', '/v1/apps/alerts-app/alerts');
    expect(list.status).toBe(200);
    expect(list.body.alerts.length).toBeGreaterThanOrEqual(2);
    const first = list.body.alerts[0];
    const show = await h.call('GET', `/v1/apps/alerts-app/alerts/${first.id}`);
    expect(show.status).toBe(200);
    expect(show.body.alert).toEqual(first);
  });

  it('#29 takes the npm client’s wrapped PATCH, the Go client’s unwrapped one (remind_every in ns) and PUT', async () => {
    const { body } = await create({ container_type: 'web', metric: 'rpm_per_container', limit: 100 });
    const id = body.alert.id;
    const wrapped = await h.call('PATCH', `/v1/apps/alerts-app/alerts/${id}`, {
      body: { alert: { limit: 150, disabled: true } },
    });
    expect(wrapped.status).toBe(200);
    expect(wrapped.body.alert).toMatchObject({ limit: 150, disabled: true, metric: 'rpm_per_container' });
    const goBody = await h.call('PATCH', `/v1/apps/alerts-app/alerts/${id}`, {
      body: { disabled: false, remind_every: 3600000000000, duration_before_trigger: 60000000000 },
    });
    expect(goBody.status).toBe(200);
    expect(goBody.body.alert).toMatchObject({
      disabled: false,
      remind_every: '1h0m0s',
      duration_before_trigger: 60000000000,
      limit: 150,
    });
    const put = await h.call('PUT', `/v1/apps/alerts-app/alerts/${id}`, {
      body: { alert: { remind_every: '', notifiers: [notifierId], send_when_below: true } },
    });
    expect(put.status).toBe(200);
    expect(put.body.alert).toMatchObject({ remind_every: '', notifiers: [notifierId], send_when_below: true });
    const events = await h.call('GET', '/v1/apps/alerts-app/events?per_page=1');
    // The platform has no edit_alert type (go-scalingo events_alert.go): the last event is still the creation.
    expect(events.body.events[0]).toMatchObject({ type: 'new_alert', type_data: { metric: 'rpm_per_container' } });
  });

  it('#30 deletes (204, empty body), records delete_alert, then 404', async () => {
    const { body } = await create({ container_type: 'web', metric: 'swap', limit: 0.2 });
    const del = await h.call('DELETE', `/v1/apps/alerts-app/alerts/${body.alert.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const events = await h.call('GET', '/v1/apps/alerts-app/events?per_page=1');
    expect(events.body.events[0]).toMatchObject({
      type: 'delete_alert',
      type_data: { container_type: 'web', metric: 'swap' },
    });
    expect((await h.call('DELETE', `/v1/apps/alerts-app/alerts/${body.alert.id}`)).body).toEqual({
      resource: 'alert',
      error: 'not found',
    });
  });

  it('create failures: 422 naming the field, 400 for malformed JSON', async () => {
    const cases: [unknown, string, RegExp][] = [
      [undefined, 'alert', /missing field/],
      [{ metric: 'cpu', limit: 0.5 }, 'container_type', /missing field/],
      [{ container_type: 'web', limit: 0.5 }, 'metric', /missing field/],
      [{ container_type: 'web', metric: 'cpu' }, 'limit', /missing field/],
      [{ container_type: 'web', metric: 'disk', limit: 0.5 }, 'metric', /must be one of/],
      [{ container_type: 'web', metric: 'cpu', limit: '0.5' }, 'limit', /must be a number/],
      [{ container_type: 'web', metric: 'cpu', limit: -1 }, 'limit', /negative/],
      [{ container_type: 'web', metric: 'cpu', limit: 80 }, 'limit', /fraction/],
      [{ container_type: '', metric: 'cpu', limit: 0.5 }, 'container_type', /empty/],
      [
        { container_type: 'web', metric: 'cpu', limit: 0.5, duration_before_trigger: 'soon' },
        'duration_before_trigger',
        /duration/,
      ],
      [{ container_type: 'web', metric: 'cpu', limit: 0.5, remind_every: -5 }, 'remind_every', /duration/],
      [{ container_type: 'web', metric: 'cpu', limit: 0.5, notifiers: ['no-nope'] }, 'notifiers', /not a notifier/],
      [{ container_type: 'web', metric: 'cpu', limit: 0.5, send_when_below: 'yes' }, 'send_when_below', /boolean/],
      [{ container_type: 'web', metric: 'cpu', limit: 0.5, metadata: [1] }, 'metadata', /./],
    ];
    for (const [alert, field, msg] of cases) {
      const res =
        alert === undefined ? await h.call('POST', '/v1/apps/alerts-app/alerts', { body: {} }) : await create(alert);
      expect(res.status, JSON.stringify(alert)).toBe(422);
      expect(Object.keys(res.body.errors), JSON.stringify(alert)).toContain(field);
      expect(res.body.errors[field][0]).toMatch(msg);
    }
    const bad = await h.call('POST', '/v1/apps/alerts-app/alerts', {
      raw: '{"alert":',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/JSON/);
  });

  it('update failures: unknown alert 404, invalid fields 422, limit checked against the resulting metric', async () => {
    const { body } = await create({ container_type: 'web', metric: 'all', limit: 500 });
    const id = body.alert.id;
    expect(
      (
        await h.call('PATCH', '/v1/apps/alerts-app/alerts/al-00000000-0000-0000-0000-000000000000', {
          body: { alert: { limit: 0.1 } },
        })
      ).body,
    ).toEqual({ resource: 'alert', error: 'not found' });
    const toCpu = await h.call('PATCH', `/v1/apps/alerts-app/alerts/${id}`, { body: { alert: { metric: 'cpu' } } });
    expect(toCpu.status).toBe(422);
    expect(toCpu.body.errors.limit[0]).toMatch(/fraction/);
    expect(
      (await h.call('PATCH', `/v1/apps/alerts-app/alerts/${id}`, { body: { metric: 'nope' } })).body.errors.metric,
    ).toBeDefined();
    expect(
      (await h.call('PATCH', `/v1/apps/alerts-app/alerts/${id}`, { body: { alert: { remind_every: 'often' } } })).body
        .errors.remind_every,
    ).toBeDefined();
    expect(
      (await h.call('PATCH', `/v1/apps/alerts-app/alerts/${id}`, { body: { alert: { notifiers: ['no-x'] } } })).status,
    ).toBe(422);
    expect(
      (
        await h.call('PATCH', `/v1/apps/alerts-app/alerts/${id}`, {
          raw: 'nope',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    expect((await h.call('GET', `/v1/apps/alerts-app/alerts/${id}`)).body.alert.metric).toBe('all');
  });

  it('access: unknown app 404, another user’s app 404, no credentials 401', async () => {
    expect((await h.call('GET', '/v1/apps/no-such-app/alerts')).body).toEqual({ resource: 'app', error: 'not found' });
    expect((await h.call('GET', '/v1/apps/alerts-app/alerts', { as: 'other' })).status).toBe(404);
    expect((await create({ container_type: 'web', metric: 'cpu', limit: 0.5 }, 'other')).status).toBe(404);
    expect((await h.call('GET', '/v1/apps/alerts-app/alerts', { as: null })).status).toBe(401);
    const list = await h.call('GET', '/v1/apps/alerts-app/alerts');
    expect((await h.call('GET', `/v1/apps/alerts-app/alerts/${list.body.alerts[0].id}`, { as: 'other' })).status).toBe(
      404,
    );
    expect(
      (await h.call('DELETE', `/v1/apps/alerts-app/alerts/${list.body.alerts[0].id}`, { as: 'other' })).status,
    ).toBe(404);
  });

  it('deleting a notifier takes it off the alerts that used it', async () => {
    const n = await h.call('POST', '/v1/apps/alerts-app/notifiers', {
      body: {
        notifier: { platform_id: WEBHOOK_PLATFORM, name: 'temp', type_data: { webhook_url: 'http://127.0.0.1:9/x' } },
      },
    });
    const { body } = await create({
      container_type: 'web',
      metric: 'cpu',
      limit: 0.5,
      notifiers: [n.body.notifier.id, notifierId],
    });
    expect((await h.call('DELETE', `/v1/apps/alerts-app/notifiers/${n.body.notifier.id}`)).status).toBe(204);
    expect((await h.call('GET', `/v1/apps/alerts-app/alerts/${body.alert.id}`)).body.alert.notifiers).toEqual([
      notifierId,
    ]);
  });
});
