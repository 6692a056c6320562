import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.ts';
import { type AppRow } from '../../src/modules/apps/apps.store.ts';
import { type Harness, startEmulator } from '../harness.ts';

// DELETE /v1/apps/:app reads the app's row once (the route's loader) and learns from the DELETE itself whether a
// concurrent deletion won: what it answers, records and tells the other areas is checked here, app hooks included.
describe('apps: create and delete', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startEmulator({ cron: { syncMs: 3_600_000 } });
  });
  afterEach(() => h.stop());

  const create = (name: string) => h.call('POST', '/v1/apps', { body: { app: { name } } });
  const del = (name: string, as: 'dev' | 'other' = 'dev') =>
    h.call('DELETE', `/v1/apps/${name}?current_name=${name}`, { as });

  /** Rows left in every table whose foreign key points at apps, for this app id. */
  function childRows(appId: string): Record<string, number> {
    const db = h.emu.db;
    const left: Record<string, number> = {};
    const tables = db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    for (const table of tables) {
      for (const fk of db
        .prepare<[string], { from: string; table: string }>('SELECT * FROM pragma_foreign_key_list(?)')
        .all(table)) {
        if (fk.table !== 'apps') continue;
        const n = db.prepare<[string], number>(`SELECT COUNT(*) FROM ${table} WHERE ${fk.from} = ?`).pluck().get(appId);
        left[`${table}.${fk.from}`] = n ?? 0;
      }
    }
    return left;
  }

  it('an app that never ran: 201 then 204, no row left, new_app and delete_app recorded with the user', async () => {
    const created = await create('never-deployed');
    expect(created.status).toBe(201);
    const id: string = created.body.app.id;
    expect(created.body.app).toMatchObject({ name: 'never-deployed', status: 'new', owner: { username: 'dev' } });
    // The creation's answer is the app as GET shows it.
    expect((await h.call('GET', `/v1/apps/${id}`)).body).toEqual(created.body);
    await h.call('POST', `/v1/apps/${id}/variables`, { body: { variable: { name: 'A', value: '1' } } });
    expect(childRows(id)['variables.app_id']).toBe(1);

    const res = await del('never-deployed');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(h.emu.db.prepare('SELECT COUNT(*) FROM apps WHERE id = ?').pluck().get(id)).toBe(0);
    const left = childRows(id);
    expect(Object.keys(left).length).toBeGreaterThan(10);
    expect(Object.entries(left).filter(([, n]) => n > 0)).toEqual([]);

    const events = await h.call('GET', '/v1/events');
    const mine = events.body.events.filter((e: { app_id: string }) => e.app_id === id);
    expect(mine.map((e: { type: string }) => e.type)).toEqual(['delete_app', 'new_variable', 'new_app']);
    expect(mine[0]).toMatchObject({ app_name: 'never-deployed', user: { username: 'dev' }, type_data: {} });
    expect(mine[2].type_data).toEqual({ git_source: null });
    expect((await h.call('GET', `/v1/apps/${id}`)).status).toBe(404);
    // The name is free again.
    expect((await create('never-deployed')).status).toBe(201);
  });

  it('two DELETEs of one app at once: one 204, one 404, one delete_app event; hooks told the row is gone', async () => {
    const apps = h.emu.area('apps').apps;
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const before: string[] = [];
    const after: [string, boolean][] = [];
    apps.addHooks({
      beforeDelete: async (app: AppRow) => {
        before.push(app.name);
        await gate;
      },
      afterDelete: (app: AppRow, gone: boolean) => void after.push([app.name, gone]),
    });
    const id: string = (await create('raced-app')).body.app.id;
    const first = del('raced-app');
    const second = del('raced-app');
    for (let i = 0; i < 100 && before.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(before).toEqual(['raced-app', 'raced-app']);
    release();
    const statuses = [(await first).status, (await second).status].sort();
    expect(statuses).toEqual([204, 404]);
    expect(after).toEqual([
      ['raced-app', true],
      ['raced-app', true],
    ]);
    const types = h.emu.db
      .prepare<[string], string>('SELECT type FROM events WHERE app_id = ? ORDER BY seq')
      .pluck()
      .all(id);
    expect(types).toEqual(['new_app', 'delete_app']);
  });

  it('a hook that fails: the error is the answer, the app stays, nothing recorded, hooks told the row is there', async () => {
    const apps = h.emu.area('apps').apps;
    const after: boolean[] = [];
    apps.addHooks({
      beforeDelete: () => {
        throw ApiError.unavailable('the engine is not ready');
      },
      afterDelete: (_app: AppRow, gone: boolean) => void after.push(gone),
    });
    const id: string = (await create('kept-app')).body.app.id;
    const res = await del('kept-app');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'the engine is not ready' });
    expect(after).toEqual([false]);
    expect((await h.call('GET', '/v1/apps/kept-app')).status).toBe(200);
    const types = h.emu.db.prepare<[string], string>('SELECT type FROM events WHERE app_id = ?').pluck().all(id);
    expect(types).toEqual(['new_app']);
  });

  it('an app that never ran is deleted synchronously: no area returns a promise, the service answers without one', async () => {
    const id: string = (await create('sync-delete')).body.app.id;
    const apps = h.emu.area('apps').apps;
    const dev = h.emu.area('accounts').auth.userByLogin('dev');
    const row = apps.store.find(id);
    if (!dev || !row) throw new Error('precondition: the user dev and the app just created');
    expect(apps.delete(dev, row, 'sync-delete')).toBeUndefined();
    expect(apps.store.find(id)).toBeUndefined();
    const types = h.emu.db
      .prepare<[string], string>('SELECT type FROM events WHERE app_id = ? ORDER BY rowid')
      .pluck()
      .all(id);
    expect(types).toEqual(['new_app', 'delete_app']);
  });

  it('a hook with something to remove first is waited on; one failing later is the answer and keeps the app', async () => {
    const apps = h.emu.area('apps').apps;
    const seen: string[] = [];
    apps.addHooks({
      beforeDelete: async (app: AppRow) => {
        await new Promise((r) => setTimeout(r, 5));
        if (app.name === 'kept-later') throw ApiError.unavailable('the engine went away');
        seen.push(`removed first ${app.name}`);
      },
      afterDelete: (app: AppRow, gone: boolean) => void seen.push(`after ${app.name} ${gone}`),
    });
    const goneId: string = (await create('waited-on')).body.app.id;
    expect((await del('waited-on')).status).toBe(204);
    expect(seen).toEqual(['removed first waited-on', 'after waited-on true']);
    expect(h.emu.db.prepare('SELECT COUNT(*) FROM apps WHERE id = ?').pluck().get(goneId)).toBe(0);

    const keptId: string = (await create('kept-later')).body.app.id;
    const res = await del('kept-later');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'the engine went away' });
    expect(seen.slice(2)).toEqual(['after kept-later false']);
    const types = h.emu.db.prepare<[string], string>('SELECT type FROM events WHERE app_id = ?').pluck().all(keptId);
    expect(types).toEqual(['new_app']);
  });

  it('only the owner deletes (403 to a collaborator, 404 to others), checked before current_name', async () => {
    await create('owned-app');
    expect((await del('owned-app', 'other')).status).toBe(404);
    await h.call('POST', '/v1/apps/owned-app/collaborators', {
      body: { collaborator: { email: 'other@example.test' } },
    });
    const token = h.emu.db
      .prepare<[], string>("SELECT invitation_token FROM collaborators WHERE email = 'other@example.test'")
      .pluck()
      .get();
    await h.call('GET', `/v1/apps/collaboration?token=${token}`, { as: 'other' });
    const wrongName = await h.call('DELETE', '/v1/apps/owned-app?current_name=nope', { as: 'other' });
    expect(wrongName.status).toBe(403);
    expect(wrongName.body.error).toMatch(/owner/);
    expect((await h.call('GET', '/v1/apps/owned-app')).status).toBe(200);
  });

  it('a deleted app with cron schedules has them stopped; deleting one without leaves the others', async () => {
    const db = h.emu.db;
    const cron = h.emu.area('cron').service;
    const apps = h.emu.area('apps').apps;
    // Two apps as a deployment with a cron.json leaves them (the deployment itself is Docker's: test/docker/cron.test.ts).
    const deployed = async (name: string) => {
      const app: AppRow = (await create(name)).body.app;
      const deploymentId = `dep-${name}`;
      db.prepare(
        "INSERT INTO deployments (id, app_id, status, source, source_kind, created_at) VALUES (?, ?, 'success', 'x', 'archive', 0)",
      ).run(deploymentId, app.id);
      db.prepare('INSERT INTO deployment_crons (deployment_id, app_id, jobs) VALUES (?, ?, ?)').run(
        deploymentId,
        app.id,
        JSON.stringify([{ command: '0 0 1 1 * echo yearly', expression: '0 0 1 1 *', run: 'echo yearly' }]),
      );
      apps.store.markDeployed(app.id, 0, 'dev', deploymentId);
      return app;
    };
    const first = await deployed('cron-app-one');
    await deployed('cron-app-two');
    await create('no-cron-app');
    h.emu.area('accounts').events.record({ type: 'deployment', app: first });
    await Promise.resolve();
    expect(cron.scheduledCount()).toBe(2);
    expect((await del('no-cron-app')).status).toBe(204);
    await Promise.resolve();
    expect(cron.scheduledCount()).toBe(2);
    expect((await del('cron-app-one')).status).toBe(204);
    await Promise.resolve();
    expect(cron.scheduledCount()).toBe(1);
  });
});
