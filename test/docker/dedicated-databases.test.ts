import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FAST } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// Dedicated databases (issue 22) as the Terraform provider 2.7.2 and the Go CLI drive them
// (go-scalingo databases_preview.go, firewall_rules.go, maintenance.go), replayed request by request
// against a real PostgreSQL server: psql in its container, its memory limit and restarts seen in Docker.
const LONG = 900_000;
const NAME = 'tf-dedicated-pg';
const GO = {
  'content-type': 'application/json',
  accept: 'application/json',
  'user-agent': 'terraform-provider-scalingo/2.7.2',
};

describe('dedicated databases, firewall rules and database settings (real Docker)', () => {
  let h: Harness;
  let instance = '';
  const dataDir = mkdtempSync(join(tmpdir(), 'emu-dbng-'));
  let appId = '';
  let addonId = '';
  let token = '';
  let container = '';
  const go = (method: string, path: string, body?: unknown, as: 'dev' | 'other' = 'dev') =>
    h.call(method, path, {
      as,
      headers: GO,
      raw: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  const dbapi = async (method: string, path: string, body?: unknown, bearer = token) => {
    const res = await fetch(`${h.emu.urls.api}/api${path}`, {
      method,
      headers: { ...GO, authorization: `Bearer ${bearer}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const psql = (sql: string) => docker('exec', '-u', 'postgres', container, 'psql', '-tAc', sql);

  beforeAll(async () => {
    h = await startEmulator({ inMemory: false, dataDir, intervals: FAST, addons: { servers: true } });
    instance = h.emu.instanceId;
  }, LONG);

  afterAll(async () => {
    if (appId) await h.call('DELETE', `/v1/apps/${appId}?current_name=${NAME}`).catch(() => undefined);
    await h.stop();
    if (instance) removeInstance(instance);
    rmSync(dataDir, { recursive: true, force: true });
  }, LONG);

  it(
    'scalingo_database create: the plan resolved, POST /v1/databases (unwrapped) → creating, then running on a real PostgreSQL server',
    async () => {
      const plans = await go('GET', '/v1/addon_providers/postgresql-ng/plans');
      const plan = plans.body.plans.find((p: { name: string }) => p.name === 'postgresql-ng-starter-512');
      expect(plan).toBeDefined();
      // The addon catalogue does not offer the technology for an app's addons.
      expect(
        (await go('GET', '/v1/addon_providers')).body.addon_providers.map((p: { id: string }) => p.id),
      ).not.toContain('postgresql-ng');

      const created = await go('POST', '/v1/databases', {
        addon_provider_id: 'postgresql-ng',
        plan_id: plan.id,
        name: NAME,
      });
      expect(created.status).toBe(201);
      const ng = created.body.database;
      expect(ng).toMatchObject({
        name: NAME,
        technology: 'postgresql-ng',
        plan: 'postgresql-ng-starter-512',
        app: { name: NAME },
      });
      expect(ng.id).toBe(ng.app.id);
      expect(ng.project_id).toMatch(/\S/);
      expect(ng.database.status).toBe('creating');
      appId = ng.id;
      // The CLI tells a database from an app by this flag (Scalingo/cli utils/database.go): user management, no `run`.
      expect((await go('GET', `/v1/apps/${NAME}`)).body.app.flags).toMatchObject({ 'dedicated-database': true });

      // waitUntilDatabaseProvisioned: GET /v1/databases, the app's addons, a token, the DB API's database.
      const addons = (await go('GET', `/v1/apps/${NAME}/addons`)).body.addons;
      expect(addons).toHaveLength(1);
      addonId = addons[0].id;
      token = (await go('POST', `/v1/apps/${NAME}/addons/${addonId}/token`)).body.addon.token;
      await eventually(
        async () => {
          const listed = (await go('GET', '/v1/databases')).body.databases.find((d: { id: string }) => d.id === appId);
          if (listed?.database.status === 'stopped') throw new Error('the database server failed to start');
          return listed?.database.status === 'running';
        },
        { timeoutMs: 600_000, intervalMs: 1000, what: 'dedicated database running' },
      );
      const db = await dbapi('GET', `/databases/${addonId}`);
      expect(db.status).toBe(200);
      // The database API's id of a dedicated database is its app's: the provider's `database_id` finds it too.
      expect(db.body.database).toMatchObject({
        id: appId,
        status: 'running',
        type_name: 'postgresql',
        version_id: '15',
        app_name: NAME,
      });

      container = dockerPs([`${LABELS.addonId}=${addonId}`])[0].id;
      expect(docker('inspect', '-f', '{{.HostConfig.Memory}}', container)).toBe(String(512 * 1024 * 1024));
      expect(psql('SELECT 40 + 2')).toBe('42');
      expect((await go('GET', `/v1/databases/${NAME}`)).body.database.id).toBe(appId);
    },
    LONG,
  );

  it('database-endpoints: the endpoint is the published port, psql on the host connects through it; force-ssl enforced there; no net peerings', async () => {
    const endpoints = (await go('GET', `/v1/databases/${appId}/endpoints`)).body.endpoints;
    expect(endpoints).toEqual([
      {
        id: expect.any(String),
        database_id: appId,
        hostname: '127.0.0.1',
        port: expect.any(Number),
        type: 'public-rw',
      },
    ]);
    const vars = (await go('GET', `/v1/apps/${NAME}/variables`)).body.variables as { name: string; value: string }[];
    const url = new URL(vars.find((v) => v.name === 'SCALINGO_POSTGRESQL_URL')!.value);
    url.hostname = endpoints[0].hostname;
    url.port = String(endpoints[0].port);
    expect(execFileSync('psql', [url.toString(), '-tAc', 'SELECT current_user'], { encoding: 'utf8' }).trim()).toBe(
      url.username,
    );

    // database-enable-feature force-ssl: the server refuses connections without TLS (pg_hba hostssl), until disabled.
    const plain = new URL(url);
    plain.searchParams.set('sslmode', 'disable');
    const connects = (u: URL) => spawnSync('psql', [u.toString(), '-tAc', 'SELECT 1'], { encoding: 'utf8' });
    expect(connects(plain).status).toBe(0);
    const on = await dbapi('POST', `/databases/${addonId}/features`, { feature: { name: 'force-ssl' } });
    expect(on.body).toEqual({ name: 'force-ssl', status: 'ACTIVATED', message: expect.any(String) });
    const refused = connects(plain);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/no encryption|SSL off/);
    const tls = new URL(url);
    tls.searchParams.set('sslmode', 'require');
    expect(connects(tls).status).toBe(0);
    expect((await dbapi('GET', `/databases/${addonId}`)).body.database.features).toEqual([
      { name: 'force-ssl', status: 'ACTIVATED' },
    ]);
    expect((await dbapi('DELETE', `/databases/${addonId}/features?feature=force-ssl`)).status).toBe(200);
    expect(connects(plain).status).toBe(0);
    expect((await dbapi('GET', `/databases/${addonId}`)).body.database.features).toEqual([]);
    expect(
      (await dbapi('POST', `/databases/${addonId}/features`, { feature: { name: 'turbo' } })).body.errors,
    ).toHaveProperty('feature');
    expect((await dbapi('DELETE', `/databases/${addonId}/features`)).status).toBe(422);

    expect((await go('GET', `/v1/databases/${appId}/net_peerings`)).body).toEqual({ net_peerings: [] });
    expect((await go('POST', `/v1/databases/${appId}/net_peerings`, { outscale_net_peering_id: 'pcx-1' })).status).toBe(
      400,
    );
    expect((await go('DELETE', `/v1/databases/${appId}/net_peerings/pcx-1`)).body).toMatchObject({
      resource: 'net_peering',
    });
    expect((await go('GET', `/v1/databases/${appId}/network_configuration`)).body.network_configuration).toEqual({
      outscale_account_id: '',
      outscale_net_id: '',
      ip_range: '',
    });
    expect((await go('GET', `/v1/databases/${appId}/endpoints`, undefined, 'other')).body).toMatchObject({
      resource: 'database',
    });
  });

  it('refuses bad creations: unknown technology or plan, bad or taken name, an NG technology as an app addon; 404 for another user', async () => {
    const bad = await go('POST', '/v1/databases', {
      addon_provider_id: 'scalingo-postgresql',
      plan_id: 'postgresql-sandbox',
      name: 'some-db-app',
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.addon_provider_id[0]).toMatch(/postgresql-ng/);
    expect(
      (await go('POST', '/v1/databases', { addon_provider_id: 'postgresql-ng', plan_id: 'nope', name: 'some-db-app' }))
        .body.errors.plan_id[0],
    ).toMatch(/starter-512/);
    expect(
      (
        await go('POST', '/v1/databases', {
          addon_provider_id: 'postgresql-ng',
          plan_id: 'postgresql-ng-starter-512',
          name: 'No_Good',
        })
      ).body.errors,
    ).toHaveProperty('name');
    const taken = await go('POST', '/v1/databases', {
      database: { addon_provider_id: 'postgresql-ng', plan_id: 'postgresql-ng-starter-512', name: NAME },
    });
    expect(taken.status).toBe(422);
    expect(taken.body.errors.name[0]).toMatch(/taken/);
    expect((await go('POST', '/v1/databases', '{"addon_provider_id":')).status).toBe(400);
    const asAddon = await go('POST', `/v1/apps/${NAME}/addons`, {
      addon: { addon_provider_id: 'postgresql-ng', plan_id: 'postgresql-ng-starter-512' },
    });
    expect(asAddon.status).toBe(422);
    expect((await go('GET', `/v1/databases/${appId}`, undefined, 'other')).body).toMatchObject({
      resource: 'database',
    });
    expect((await go('GET', '/v1/databases', undefined, 'other')).body.databases).toEqual([]);
    expect((await h.call('GET', '/v1/databases', { as: null })).status).toBe(401);
  });

  it('firewall rules: a custom range and a managed range recorded, listed and removed; bad input refused', async () => {
    const ranges = await dbapi('GET', '/firewall/managed_ranges');
    expect(ranges.body.ranges).toEqual([{ id: 'man-local-egress', name: 'Scalingo local region' }]);
    const custom = await dbapi('POST', `/databases/${addonId}/firewall_rules`, {
      type: 'custom_range',
      cidr: '203.0.113.0/24',
      label: 'Office network',
    });
    expect(custom.status).toBe(201);
    expect(custom.body.rule).toMatchObject({
      type: 'custom_range',
      cidr: '203.0.113.0/24',
      label: 'Office network',
      range_id: '',
      database_id: addonId,
    });
    const managed = await dbapi('POST', `/databases/${addonId}/firewall_rules`, {
      type: 'managed_range',
      range_id: 'man-local-egress',
    });
    expect(managed.status).toBe(201);
    const list = (await dbapi('GET', `/databases/${addonId}/firewall_rules`)).body.rules;
    expect(list.map((r: { id: string }) => r.id)).toEqual([custom.body.rule.id, managed.body.rule.id]);

    const refused = async (body: unknown, field: string, re: RegExp) => {
      const res = await dbapi('POST', `/databases/${addonId}/firewall_rules`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors[field][0]).toMatch(re);
    };
    await refused({ type: 'custom_range', cidr: '203.0.113.0/24' }, 'cidr', /already/);
    await refused({ type: 'custom_range', cidr: '203.0.113.0' }, 'cidr', /CIDR/);
    await refused({ type: 'custom_range', cidr: '300.1.1.1/8' }, 'cidr', /invalid address/);
    await refused({ type: 'custom_range', cidr: '10.0.0.0/33' }, 'cidr', /prefix/);
    await refused({ type: 'custom_range' }, 'cidr', /blank/);
    await refused({ type: 'managed_range', range_id: 'man-elsewhere' }, 'range_id', /man-local-egress/);
    await refused({ type: 'managed_range', range_id: 'man-local-egress', label: 'x' }, 'label', /custom_range/);
    await refused({ type: 'managed_range', range_id: 'man-local-egress' }, 'range_id', /already/);
    await refused({ type: 'any' }, 'type', /./);

    expect((await dbapi('DELETE', `/databases/${addonId}/firewall_rules/${custom.body.rule.id}`)).status).toBe(204);
    expect((await dbapi('DELETE', `/databases/${addonId}/firewall_rules/${custom.body.rule.id}`)).body).toMatchObject({
      resource: 'firewall_rule',
    });
    expect((await dbapi('GET', `/databases/${addonId}/firewall_rules`)).body.rules).toHaveLength(1);
    expect((await dbapi('GET', `/databases/ad-00000000-0000-0000-0000-000000000000/firewall_rules`)).status).toBe(404);
    expect((await dbapi('GET', `/databases/${addonId}/firewall_rules`, undefined, 'nope')).status).toBe(401);
  });

  it('periodic backups and maintenance window: PATCH /databases/:id changes what GET shows; bad values 422; no maintenance ran', async () => {
    const before = (await dbapi('GET', `/databases/${addonId}`)).body.database;
    expect(before).toMatchObject({ periodic_backups_enabled: true, periodic_backups_scheduled_at: [1] });
    const backups = await dbapi('PATCH', `/databases/${addonId}`, {
      database: { periodic_backups_scheduled_at: 4, periodic_backups_enabled: false },
    });
    expect(backups.status).toBe(200);
    expect(backups.body.database).toMatchObject({
      periodic_backups_enabled: false,
      periodic_backups_scheduled_at: [4],
    });
    const window = await dbapi('PATCH', `/databases/${addonId}`, {
      database: { maintenance_window: { weekday_utc: 5, starting_hour_utc: 22 } },
    });
    expect(window.body.database.maintenance_window).toEqual({
      weekday_utc: 5,
      starting_hour_utc: 22,
      duration_in_hour: 8,
    });
    expect((await dbapi('GET', `/databases/${addonId}`)).body.database).toMatchObject({
      periodic_backups_scheduled_at: [4],
      maintenance_window: { weekday_utc: 5 },
    });
    expect(
      (await dbapi('PATCH', `/databases/${addonId}`, { database: { maintenance_window: { weekday_utc: 7 } } })).status,
    ).toBe(422);
    expect(
      (await dbapi('PATCH', `/databases/${addonId}`, { database: { periodic_backups_scheduled_at: 24 } })).status,
    ).toBe(422);
    expect((await dbapi('PATCH', `/databases/${addonId}`, { database: { plan: 'x' } })).status).toBe(422);
    expect((await dbapi('GET', `/databases/${addonId}/maintenance?page=1&per_page=20`)).body).toMatchObject({
      maintenance: [],
      meta: { pagination: { total_count: 0 } },
    });
    expect((await dbapi('GET', `/databases/${addonId}/maintenance/m-1`)).status).toBe(404);
  });

  it("logs-archives --addon: one archive of the server's output, downloaded gzipped from a signed URL", async () => {
    const res = await dbapi('GET', `/databases/${addonId}/logs_archives?page=1`);
    expect(res.status).toBe(200);
    expect(res.body.has_more).toBe(false);
    const [archive] = res.body.archives;
    expect(archive.size).toBeGreaterThan(0);
    const file = await fetch(archive.url);
    expect(file.status).toBe(200);
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(bytes.length).toBe(archive.size);
    expect(gunzipSync(bytes).toString()).toMatch(/database system is ready to accept connections/);
    expect((await dbapi('GET', `/databases/${addonId}/logs_archives?page=2`)).body.archives).toEqual([]);
    expect((await dbapi('GET', `/databases/${addonId}/logs_archives?page=x`)).status).toBe(422);
    const forged = new URL(archive.url);
    forged.searchParams.set('token', 'forged');
    expect((await fetch(forged)).status).toBe(401);
  });

  it(
    'a plan change restarts the server with the new memory: updating (the users list waits for it) then running',
    async () => {
      const startedAt = docker('inspect', '-f', '{{.State.StartedAt}}', container);
      const plan = (await go('GET', '/v1/addon_providers/postgresql-ng/plans')).body.plans.find(
        (p: { name: string }) => p.name === 'postgresql-ng-business-1024',
      );
      const up = await go('PATCH', `/v1/apps/${appId}/addons/${addonId}`, { addon: { plan_id: plan.id } });
      expect(up.status).toBe(200);
      expect((await dbapi('GET', `/databases/${addonId}`)).body.database.status).toBe('updating');
      // What the database API records answers during the restart; the users list waits for the server (issue 37).
      expect((await dbapi('GET', `/databases/${addonId}/backups`)).status).toBe(200);
      const users = await dbapi('GET', `/databases/${addonId}/users`);
      if (users.status !== 200) {
        expect(users.status).toBe(503);
        expect(users.body.error).toMatch(/retry once the addon is running/);
      }
      await eventually(async () => (await dbapi('GET', `/databases/${addonId}`)).body.database.status === 'running', {
        timeoutMs: 180_000,
        intervalMs: 500,
        what: 'running again',
      });
      expect(docker('inspect', '-f', '{{.HostConfig.Memory}}', container)).toBe(String(1024 * 1024 * 1024));
      expect(docker('inspect', '-f', '{{.State.StartedAt}}', container)).not.toBe(startedAt);
      expect((await dbapi('GET', `/databases/${addonId}/users`)).status).toBe(200);
      expect((await go('GET', '/v1/databases')).body.databases[0].plan).toBe('postgresql-ng-business-1024');
    },
    LONG,
  );

  it(
    'scalingo_database destroy: DELETE /v1/apps/:id?current_name= removes the database, its server and its volume',
    async () => {
      const volume = docker('inspect', '-f', '{{range .Mounts}}{{.Name}}{{end}}', container);
      expect((await go('DELETE', `/v1/apps/${appId}?current_name=${NAME}`)).status).toBe(204);
      appId = '';
      expect((await go('GET', '/v1/databases')).body.databases).toEqual([]);
      await eventually(() => dockerPs([`${LABELS.addonId}=${addonId}`], true).length === 0, {
        timeoutMs: 60_000,
        what: 'server container removed',
      });
      await eventually(() => !docker('volume', 'ls', '-q', '--filter', `name=${volume}`), {
        timeoutMs: 60_000,
        what: 'volume removed',
      });
    },
    LONG,
  );
});
