import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';

// The addon surface the Go clients use beyond provisioning: the catalogue with categories and plans,
// `options: null`, the addon token and the database API behind SCALINGO_DB_URL.
describe('addons: catalogue, token and database API', () => {
  let h: Harness;
  let addonId = '';
  let token = '';
  beforeAll(async () => {
    h = await startEmulator();
    await h.call('POST', '/v1/apps', { body: { app: { name: 'db-app' } } });
  });
  afterAll(() => h.stop());
  const db = (path: string, bearer: string | null = token, method = 'GET') =>
    fetch(`${h.api}/api${path}`, { method, headers: bearer ? { authorization: `Bearer ${bearer}` } : {} }).then(
      async (r) => ({ status: r.status, body: (await r.json()) as any }),
    );

  it('lists providers with their category and plans (go-scalingo AddonProvider)', async () => {
    const res = await h.call('GET', '/v1/addon_providers');
    const pg = res.body.addon_providers.find((p: { id: string }) => p.id === 'scalingo-postgresql');
    expect(pg).toMatchObject({
      name: 'PostgreSQL',
      category: { id: expect.any(String), name: 'Databases', position: 1 },
      provider_name: 'Scalingo',
      hds_available: false,
    });
    expect(pg.plans.map((p: { name: string }) => p.name)).toContain('postgresql-sandbox');
    expect(pg.plans[0]).toMatchObject({ trial_available: true, disabled_alternative_plan_id: null });
    const plans = await h.call('GET', '/v1/addon_providers/scalingo-postgresql/plans?show_all=false');
    expect(plans.body.plans).toEqual(pg.plans);
    expect((await h.call('GET', '/v1/addon_providers/scalingo-nope/plans?show_all=false')).body).toEqual({
      resource: 'addon_provider',
      error: 'not found',
    });
    // Public, as go-scalingo's NoAuth for an unauthenticated client expects; the rest of /v1 is not.
    expect((await h.call('GET', '/v1/addon_providers', { as: null })).status).toBe(200);
    expect((await h.call('GET', '/v1/addon_providers/scalingo-redis/plans', { as: null })).status).toBe(200);
    expect((await h.call('GET', '/v1/apps/db-app/addons', { as: null })).status).toBe(401);
  });

  it('provisions with options: null (a nil Go map) and updates the plan', async () => {
    const plans = (await h.call('GET', '/v1/addon_providers/scalingo-postgresql/plans')).body.plans;
    const res = await h.call('POST', '/v1/apps/db-app/addons', {
      body: { addon: { addon_provider_id: 'scalingo-postgresql', plan_id: plans[0].id, options: null } },
    });
    expect(res.status).toBe(201);
    addonId = res.body.addon.id;
    const up = await h.call('PATCH', `/v1/apps/db-app/addons/${addonId}`, {
      body: { addon: { plan_id: plans[1].id } },
    });
    expect(up.body.addon.plan.id).toBe(plans[1].id);
    const ev = (await h.call('GET', '/v1/apps/db-app/events')).body.events[0];
    expect(ev).toMatchObject({
      type: 'upgrade_addon',
      type_data: { addon_provider_name: 'PostgreSQL', old_plan_name: plans[0].name, new_plan_name: plans[1].name },
    });
    expect(
      (
        await h.call('POST', '/v1/apps/db-app/addons', {
          body: { addon: { addon_provider_id: 'scalingo-postgresql', plan_id: plans[0].id, options: 'x' } },
        })
      ).status,
    ).toBe(422);
  });

  it('gives a token (POST …/token, no body) that opens the database API of that addon only', async () => {
    const res = await h.call('POST', `/v1/apps/db-app/addons/${addonId}/token`);
    expect(res.status).toBe(200);
    token = res.body.addon.token;
    expect(token).toMatch(/^adt\./);
    expect((await h.call('POST', '/v1/apps/db-app/addons/ad-nope/token')).status).toBe(404);
    expect((await h.call('POST', `/v1/apps/db-app/addons/${addonId}/token`, { as: 'other' })).status).toBe(404);

    const show = await db(`/databases/${addonId}`);
    expect(show.status).toBe(200);
    expect(show.body.database).toMatchObject({
      id: addonId,
      app_name: 'db-app',
      type_name: 'postgresql',
      status: 'running',
      features: [],
      maintenance_window: { weekday_utc: 0 },
    });
    expect((await db(`/databases/${addonId}`, null)).status).toBe(401);
    expect((await db(`/databases/${addonId}`, 'adt.forged')).status).toBe(401);
    expect((await db(`/databases/${addonId}`, `${token.slice(0, -2)}xx`)).status).toBe(401);
    expect((await db('/databases/ad-00000000-0000-0000-0000-000000000000')).status).toBe(404);
    // Without SCALINGO_DB_URL the clients use the region's database_api (/v1/regions).
    const region = (await h.call('GET', '/v1/regions')).body.regions.find((r: { name: string }) => r.name === 'local');
    const viaRegion = await fetch(`${region.database_api}/api/databases/${addonId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(viaRegion.status).toBe(200);
    const backups = await fetch(`${region.database_api}/api/databases/${addonId}/backups`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(backups.status).toBe(400);
  });

  it('answers what the stand-in lacks, in a {error} the CLI prints, for logs, backups, users and the rest', async () => {
    for (const [path, feature] of [
      [`/databases/${addonId}/logs`, 'logs'],
      [`/databases/${addonId}/logs_archives?page=1`, 'log archives'],
      [`/databases/${addonId}/backups`, 'backups'],
      [`/databases/${addonId}/users`, 'database users'],
      [`/databases/${addonId}/maintenance?page=1&per_page=20`, 'maintenance windows'],
      ['/database_type_versions/v1', 'database server features'],
    ] as const) {
      const res = await db(path);
      expect(res.status, path).toBe(400);
      expect(res.body.error).toMatch(
        new RegExp(`stand-in of the Scalingo emulator: no database server runs, so ${feature} are not available`),
      );
    }
    expect((await db(`/databases/${addonId}/backups`, token, 'POST')).status).toBe(400);
  });

  it('a limited collaborator cannot touch addons or reach the database', async () => {
    await h.call('POST', '/v1/apps/db-app/collaborators', {
      body: { collaborator: { email: 'other@example.test', is_limited: true } },
    });
    expect((await h.call('GET', '/v1/apps/db-app/addons', { as: 'other' })).status).toBe(200);
    expect((await h.call('POST', `/v1/apps/db-app/addons/${addonId}/token`, { as: 'other' })).status).toBe(403);
    expect((await h.call('DELETE', `/v1/apps/db-app/addons/${addonId}`, { as: 'other' })).status).toBe(403);
    expect((await h.call('GET', '/v1/apps/db-app/variables', { as: 'other' })).status).toBe(403);
  });
});
