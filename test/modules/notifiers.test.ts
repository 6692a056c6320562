import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeStatsRuntime } from '../support/fake-stats-runtime.ts';
import { type Receiver, startReceiver } from '../support/webhook-receiver.ts';

const WEBHOOK = '5982f145d48c3600273ef08a';
const EMAIL = '59c52ac27651ce002c1d4620';

describe('notifiers and notification platforms', () => {
  let h: Harness;
  let rx: Receiver;
  beforeAll(async () => {
    h = await startEmulator(
      { notifiers: { webhookBackoffMs: 20, webhookRetries: 2 } },
      { runtime: new FakeStatsRuntime() },
    );
    rx = await startReceiver();
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'notif-app' } } })).status).toBe(201);
  });
  afterAll(async () => {
    await h.stop();
    await rx.close();
  });

  it('lists the platforms without credentials (go-scalingo sends NoAuth), and searches by name', async () => {
    const res = await h.call('GET', '/v1/notification_platforms', { as: null });
    expect(res.status).toBe(200);
    const names = res.body.notification_platforms.map((p: { name: string }) => p.name);
    expect(names).toEqual(expect.arrayContaining(['webhook', 'email', 'slack']));
    const webhook = res.body.notification_platforms.find((p: { name: string }) => p.name === 'webhook');
    expect(Object.keys(webhook).sort()).toEqual([
      'available_event_ids',
      'description',
      'display_name',
      'id',
      'logo_url',
      'name',
    ]);
    expect(webhook.id).toBe(WEBHOOK);
    expect(webhook.available_event_ids).toContain('et-alert');
    const search = await h.call('GET', '/v1/notification_platforms/search?name=email', { as: null });
    expect(search.body.notification_platforms.map((p: { id: string }) => p.id)).toEqual([EMAIL]);
    expect(
      (await h.call('GET', '/v1/notification_platforms/search?name=pager', { as: null })).body.notification_platforms,
    ).toEqual([]);
  });

  it('creates, shows, lists, updates and deletes a notifier, recording new/edit/delete_notifier', async () => {
    const created = await h.call('POST', '/v1/apps/notif-app/notifiers', {
      body: {
        notifier: {
          platform_id: WEBHOOK,
          name: 'My hook',
          type_data: { webhook_url: rx.url },
          selected_events: ['scale'],
        },
      },
    });
    expect(created.status).toBe(201);
    const n = created.body.notifier;
    expect(n.id).toMatch(/^no-[0-9a-f-]{36}$/);
    expect(n).toMatchObject({
      name: 'My hook',
      app: 'notif-app',
      active: true,
      type: 'webhook',
      platform_id: WEBHOOK,
      send_all_alerts: false,
      send_all_events: false,
      selected_event_ids: ['et-scale'],
      type_data: { webhook_url: rx.url },
    });
    expect((await h.call('GET', `/v1/apps/notif-app/notifiers/${n.id}`)).body.notifier).toEqual(n);
    expect((await h.call('GET', '/v1/apps/notif-app/notifiers')).body.notifiers).toEqual([n]);
    const ev = await h.call('GET', '/v1/apps/notif-app/events?per_page=1');
    expect(ev.body.events[0]).toMatchObject({
      type: 'new_notifier',
      type_data: {
        notifier_name: 'My hook',
        active: true,
        notifier_type: 'webhook',
        platform_name: 'webhook',
        selected_events: ['scale'],
        notifier_type_data: { webhook_url: rx.url },
      },
    });

    const upd = await h.call('PATCH', `/v1/apps/notif-app/notifiers/${n.id}`, {
      body: { notifier: { name: 'Renamed', active: false, selected_event_ids: ['et-restart'] } },
    });
    expect(upd.status).toBe(200);
    expect(upd.body.notifier).toMatchObject({
      name: 'Renamed',
      active: false,
      selected_event_ids: ['et-restart'],
      type_data: { webhook_url: rx.url },
    });
    expect((await h.call('GET', '/v1/apps/notif-app/events?per_page=1')).body.events[0].type).toBe('edit_notifier');

    expect((await h.call('DELETE', `/v1/apps/notif-app/notifiers/${n.id}`)).status).toBe(204);
    expect((await h.call('GET', '/v1/apps/notif-app/events?per_page=1')).body.events[0]).toMatchObject({
      type: 'delete_notifier',
      type_data: { notifier_name: 'Renamed' },
    });
    expect((await h.call('GET', `/v1/apps/notif-app/notifiers/${n.id}`)).body).toEqual({
      resource: 'notifier',
      error: 'not found',
    });
  });

  it('accepts the Go client’s body (type, platform_id, selected_events, phone_number "") and defaults e-mail recipients to the owner', async () => {
    const res = await h.call('POST', '/v1/apps/notif-app/notifiers', {
      body: {
        notifier: {
          id: '',
          app_id: '',
          type: '',
          name: 'Mail',
          platform_id: EMAIL,
          created_at: '0001-01-01T00:00:00Z',
          type_data: { phone_number: '' },
        },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.notifier.type).toBe('email');
    expect(res.body.notifier.type_data.user_ids).toHaveLength(1);
    expect(res.body.notifier.type_data.emails).toEqual([]);
  });

  it('sends the events a notifier selected to its webhook (the event JSON itself) and test notifications', async () => {
    const n = await h.call('POST', '/v1/apps/notif-app/notifiers', {
      body: {
        notifier: { platform_id: WEBHOOK, name: 'all', send_all_events: true, type_data: { webhook_url: rx.url } },
      },
    });
    const before = rx.bodies.length;
    await h.call('PATCH', '/v1/apps/notif-app', { body: { app: { force_https: true } } });
    const got = await eventually(() => rx.bodies.slice(before).find((b) => b.type === 'edit_app'), {
      what: 'edit_app notification',
    });
    expect(got).toMatchObject({
      app_name: 'notif-app',
      user: { username: 'dev', email: 'dev@example.test' },
      type_data: { force_https: true },
    });
    expect(got.id).toMatch(/^[0-9a-f]{24}$/);
    expect((await h.call('POST', `/v1/apps/notif-app/notifiers/${n.body.notifier.id}/test`)).status).toBe(200);
    await eventually(() => rx.bodies.some((b) => b.type === 'test'), { what: 'test notification' });
    await h.call('DELETE', `/v1/apps/notif-app/notifiers/${n.body.notifier.id}`);
  });

  it('a deleted app’s notifiers go with it: its delete_app is sent to no one', async () => {
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'gone-notif-app' } } })).status).toBe(201);
    for (const app of ['gone-notif-app', 'notif-app']) {
      const res = await h.call('POST', `/v1/apps/${app}/notifiers`, {
        body: {
          notifier: { platform_id: WEBHOOK, name: 'all', send_all_events: true, type_data: { webhook_url: rx.url } },
        },
      });
      expect(res.status).toBe(201);
    }
    const before = rx.bodies.length;
    expect((await h.call('DELETE', '/v1/apps/gone-notif-app?current_name=gone-notif-app')).status).toBe(204);
    // A later event of another app is delivered: the deletion's would have been sent before it.
    await h.call('PATCH', '/v1/apps/notif-app', { body: { app: { router_logs: true } } });
    await eventually(() => rx.bodies.slice(before).some((b) => b.type === 'edit_app'), {
      what: 'edit_app notification',
    });
    expect(rx.bodies.slice(before).map((b) => b.app_name)).not.toContain('gone-notif-app');
    expect(
      h.emu.db
        .prepare("SELECT COUNT(*) FROM events WHERE type = 'delete_app' AND app_name = 'gone-notif-app'")
        .pluck()
        .get(),
    ).toBe(1);
  });

  it('retries a failing webhook with back-off', async () => {
    const flaky = await startReceiver(2);
    try {
      const n = await h.call('POST', '/v1/apps/notif-app/notifiers', {
        body: { notifier: { platform_id: WEBHOOK, name: 'flaky', type_data: { webhook_url: flaky.url } } },
      });
      await h.call('POST', `/v1/apps/notif-app/notifiers/${n.body.notifier.id}/test`);
      await eventually(() => flaky.bodies.length === 1, { what: 'delivery after two failures' });
      expect(flaky.hits).toBe(3);
    } finally {
      await flaky.close();
    }
  });

  it('an e-mail notifier writes one JSON line per notification to the outbox', async () => {
    const n = await h.call('POST', '/v1/apps/notif-app/notifiers', {
      body: { notifier: { platform_id: EMAIL, name: 'ops', type_data: { emails: ['ops@example.test'] } } },
    });
    await h.call('POST', `/v1/apps/notif-app/notifiers/${n.body.notifier.id}/test`);
    const file = h.emu.area('monitoring').outboxFile;
    const line = await eventually(
      async () => {
        await h.emu.area('monitoring').drainOutbox();
        if (!existsSync(file)) return undefined;
        return readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
          .find((l) => l.notifier_id === n.body.notifier.id);
      },
      { what: 'outbox line' },
    );
    expect(line).toMatchObject({ to: ['ops@example.test'], event: { type: 'test', app_name: 'notif-app' } });
    expect(line.subject).toMatch(/notif-app/);
  });

  it('failure paths: 422 naming the field, 404s, 401', async () => {
    const post = (notifier: unknown) => h.call('POST', '/v1/apps/notif-app/notifiers', { body: { notifier } });
    const cases: [unknown, string][] = [
      [{ name: 'x', type_data: { webhook_url: rx.url } }, 'platform_id'],
      [{ name: 'x', platform_id: 'nope' }, 'platform_id'],
      [{ platform_id: WEBHOOK, type_data: { webhook_url: rx.url } }, 'name'],
      [{ platform_id: WEBHOOK, name: 'x' }, 'type_data.webhook_url'],
      [{ platform_id: WEBHOOK, name: 'x', type_data: { webhook_url: 'ftp://example.test' } }, 'type_data.webhook_url'],
      [{ platform_id: WEBHOOK, name: 'x', type_data: { webhook_url: 'not a url' } }, 'type_data.webhook_url'],
      [{ platform_id: EMAIL, name: 'x', type_data: { emails: ['not-an-email'] } }, 'type_data.emails.0'],
      [{ platform_id: EMAIL, name: 'x', type_data: { user_ids: ['us-nobody'] } }, 'type_data.user_ids'],
      [{ platform_id: EMAIL, name: 'x', selected_event_ids: ['et-nope'] }, 'selected_event_ids'],
      [{ platform_id: EMAIL, name: 'x', selected_events: ['nope'] }, 'selected_events'],
      [{ platform_id: EMAIL, name: 'x', active: 'yes' }, 'active'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(Object.keys(res.body.errors), JSON.stringify(body)).toContain(field);
    }
    expect(
      (
        await h.call('POST', '/v1/apps/notif-app/notifiers', {
          raw: '{',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    expect(
      (await h.call('PATCH', '/v1/apps/notif-app/notifiers/no-x', { body: { notifier: { name: 'y' } } })).body,
    ).toEqual({ resource: 'notifier', error: 'not found' });
    expect((await h.call('DELETE', '/v1/apps/notif-app/notifiers/no-x')).status).toBe(404);
    expect((await h.call('POST', '/v1/apps/notif-app/notifiers/no-x/test')).status).toBe(404);
    expect((await h.call('GET', '/v1/apps/notif-app/notifiers', { as: 'other' })).status).toBe(404);
    expect((await h.call('GET', '/v1/apps/notif-app/notifiers', { as: null })).status).toBe(401);
  });
});
