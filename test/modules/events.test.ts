import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';

describe('events #37–#38', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startEmulator({ pagination: { defaultPerPage: 30, maxPerPage: 5 } });
  });
  afterAll(() => h.stop());

  it('#37 lists the event categories, without credentials as the npm client asks', async () => {
    const res = await h.call('GET', '/v1/event_categories', { as: null });
    expect(res.status).toBe(200);
    expect(res.body.event_categories[0]).toEqual({
      id: '5982f139d48c360021b1eb44',
      name: 'app_operations',
      display_name: 'App operations',
      position: 1,
    });
    for (const c of res.body.event_categories)
      expect(Object.keys(c).sort()).toEqual(['display_name', 'id', 'name', 'position']);
    const types = await h.call('GET', '/v1/event_types', { as: null });
    const ids = new Set(res.body.event_categories.map((c: { id: string }) => c.id));
    expect(types.body.event_types.length).toBeGreaterThan(10);
    for (const t of types.body.event_types) expect(ids.has(t.category_id)).toBe(true);
  });

  it('#38 records app actions with their real types and type_data, newest first', async () => {
    await h.call('POST', '/v1/apps', { body: { app: { name: 'events-app' } } });
    await h.call('PATCH', '/v1/apps/events-app', { body: { app: { force_https: true } } });
    await h.call('POST', '/v1/apps/events-app/rename', {
      body: { current_name: 'events-app', new_name: 'events-app-2' },
    });
    await h.call('POST', '/v1/apps/events-app-2/collaborators', {
      body: { collaborator: { email: 'other@example.test' } },
    });
    await h.call('PATCH', '/v1/apps/events-app-2', { body: { app: { owner: 'other@example.test' } } });
    await h.call('POST', '/v1/apps/events-app-2/child_apps', { body: { app: { name: 'events-child' } } });

    const res = await h.call('GET', '/v1/apps/events-app-2/events?per_page=5');
    expect(res.status).toBe(200);
    const types = res.body.events.map((e: { type: string }) => e.type);
    expect(types).toEqual([
      'create_review_app',
      'transfer_app',
      'accept_collaborator',
      'new_collaborator',
      'rename_app',
    ]);
    const rename = res.body.events[4];
    expect(rename).toMatchObject({
      app_name: 'events-app-2',
      type_data: { old_name: 'events-app', new_name: 'events-app-2' },
      user: { username: 'dev', email: 'dev@example.test' },
    });
    expect(rename.created_at).toMatch(/\.\d{3}Z$/);
    const transfer = res.body.events[1];
    expect(transfer.type_data).toMatchObject({ old_owner: { username: 'dev' }, new_owner: { username: 'other' } });

    const page2 = await h.call('GET', '/v1/apps/events-app-2/events?page=2&per_page=5');
    expect(page2.body.events.map((e: { type: string }) => e.type)).toEqual(['edit_app', 'new_app']);
    expect(page2.body.events[0].type_data).toEqual({ force_https: true });
    expect(page2.body.meta.pagination).toEqual({
      prev_page: 1,
      current_page: 2,
      next_page: null,
      total_pages: 2,
      total_count: 7,
    });
  });

  it('clamps per_page to the maximum and treats the Go client’s page=0 as the default', async () => {
    const res = await h.call('GET', '/v1/apps/events-app-2/events?page=0&per_page=0');
    expect(res.status).toBe(200);
    expect(res.body.meta.pagination.current_page).toBe(1);
    const big = await h.call('GET', '/v1/apps/events-app-2/events?per_page=1000');
    expect(big.body.events).toHaveLength(5);
    expect((await h.call('GET', '/v1/apps/events-app-2/events?per_page=-3')).status).toBe(422);
  });

  it('the app timeline is private; the user timeline spans apps', async () => {
    await h.call('POST', '/v1/apps', { as: 'trial', body: { app: { name: 'private-events' } } });
    expect((await h.call('GET', '/v1/apps/private-events/events')).status).toBe(404);
    expect((await h.call('GET', '/v1/apps/private-events/events', { as: null })).status).toBe(401);
    const mine = await h.call('GET', '/v1/events?per_page=5');
    expect(mine.status).toBe(200);
    expect(mine.body.events.some((e: { app_name: string }) => e.app_name === 'private-events')).toBe(false);
    expect(mine.body.meta.pagination.total_count).toBeGreaterThanOrEqual(7);
  });

  it('keeps a deleted app’s events in the owner timeline', async () => {
    await h.call('POST', '/v1/apps', { as: 'other', body: { app: { name: 'short-lived-app' } } });
    await h.call('DELETE', '/v1/apps/short-lived-app?current_name=short-lived-app', { as: 'other' });
    const res = await h.call('GET', '/v1/events', { as: 'other' });
    expect(res.body.events[0]).toMatchObject({ type: 'delete_app', app_name: 'short-lived-app' });
  });
});
