import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgTime } from '../../src/modules/addons/addon-pitr.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FAST } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// Point-in-time recovery of a real PostgreSQL addon (issue 22), as the Go CLI's `database-pitr-recovery-window`
// and `database-pitr-restore` call it (go-scalingo DatabaseGetPITRRecoveryWindow, DatabaseRestorePITR): the
// window, then a restore to a time between two writes, proven with psql in the server's container.
const APP = 'pitr-app';
const SANDBOX_APP = 'pitr-sandbox-app';
const LONG = 900_000;

describe('point-in-time recovery of a PostgreSQL addon (real Docker)', () => {
  let h: Harness;
  const dataDir = mkdtempSync(join(tmpdir(), 'emu-pitr-'));
  const addons = {} as Record<'starter' | 'sandbox' | 'redis', { id: string; token: string }>;
  let container = '';
  let url: URL;

  const api = async (method: string, path: string, token: string | null, body?: unknown) => {
    const res = await fetch(`${h.emu.urls.api}/api${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        accept: 'application/json',
        'content-type': 'application/json',
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const psql = (sql: string) => {
    const r = spawnSync(
      'docker',
      ['exec', '-e', `PGPASSWORD=${url.password}`, container, 'psql', '-h', '127.0.0.1', '-U', url.username].concat([
        '-d',
        url.pathname.slice(1),
        '-v',
        'ON_ERROR_STOP=1',
        '-tAc',
        sql,
      ]),
      { encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`psql failed: ${r.stderr}`);
    return r.stdout.trim();
  };
  const addAddon = async (provider: string, plan: string, app = APP) => {
    const add = await h.call('POST', `/v1/apps/${app}/addons`, {
      body: { addon: { addon_provider_id: provider, plan_id: plan } },
    });
    expect(add.status, JSON.stringify(add.body)).toBe(201);
    const id = add.body.addon.id as string;
    const token = (await h.call('POST', `/v1/apps/${app}/addons/${id}/token`)).body.addon.token as string;
    await eventually(
      async () => {
        const status = (await h.call('GET', `/v1/apps/${app}/addons/${id}`)).body.addon.status;
        if (status === 'error') throw new Error(`the ${plan} server failed to start`);
        return status === 'running';
      },
      { timeoutMs: 600_000, what: `${plan} addon running` },
    );
    return { id, token };
  };

  beforeAll(async () => {
    h = await startEmulator({ inMemory: false, dataDir, intervals: FAST, addons: { servers: true } });
    for (const name of [APP, SANDBOX_APP])
      expect((await h.call('POST', '/v1/apps', { body: { app: { name } } })).status).toBe(201);
    [addons.starter, addons.sandbox, addons.redis] = await Promise.all([
      addAddon('scalingo-postgresql', 'postgresql-starter-512'),
      addAddon('scalingo-postgresql', 'postgresql-sandbox', SANDBOX_APP),
      addAddon('scalingo-redis', 'redis-sandbox'),
    ]);
    container = dockerPs([`${LABELS.addonId}=${addons.starter.id}`])[0].id;
    const vars = (await h.call('GET', `/v1/apps/${APP}/variables`)).body.variables as { name: string; value: string }[];
    const pg = vars.find((v) => v.name === 'SCALINGO_POSTGRESQL_URL');
    if (!pg) throw new Error('the app has no SCALINGO_POSTGRESQL_URL');
    url = new URL(pg.value);
  }, LONG);

  afterAll(async () => {
    for (const name of [APP, SANDBOX_APP])
      await h.call('DELETE', `/v1/apps/${name}?current_name=${name}`).catch(() => undefined);
    await h.stop();
    removeInstance(h.emu.instanceId);
    rmSync(dataDir, { recursive: true, force: true });
  }, LONG);

  it(
    'the recovery window opens once the base backup is made: from then until now',
    async () => {
      const w = await eventually(
        async () => {
          const res = await api('GET', `/databases/${addons.starter.id}/pitr/recovery_window`, addons.starter.token);
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          return res.body.recovery_window.earliest_recoverable_at ? res.body.recovery_window : null;
        },
        { timeoutMs: 120_000, what: 'a recovery window' },
      );
      const earliest = Date.parse(w.earliest_recoverable_at);
      const latest = Date.parse(w.latest_recoverable_at);
      expect(earliest).toBeLessThanOrEqual(latest);
      expect(Math.abs(latest - Date.now())).toBeLessThan(60_000);
      // The base backup and the archived log are in the server's volume.
      expect(docker('exec', container, 'ls', '/var/lib/postgresql/data/pitr/base')).toMatch(/base\.tar\.gz/);
    },
    LONG,
  );

  it(
    'a restore to a time between two writes brings back the first and not the second; the server takes writes again',
    async () => {
      psql("CREATE TABLE notes (text text); INSERT INTO notes VALUES ('before');");
      await new Promise((ok) => setTimeout(ok, 1_500));
      const target = new Date().toISOString();
      await new Promise((ok) => setTimeout(ok, 1_500));
      psql("INSERT INTO notes VALUES ('after'); DELETE FROM notes WHERE text = 'before';");
      expect(psql('SELECT text FROM notes')).toBe('after');

      // The CLI's request: go-scalingo sends the time as Go's time.Time encodes it.
      const res = await api('POST', `/databases/${addons.starter.id}/pitr/restore`, addons.starter.token, {
        restore_time: target,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.operation).toMatchObject({ type: 'database-pitr-restore', status: 'pending' });
      const op = await eventually(
        async () => {
          const o = (await h.call('GET', `/v1/apps/${APP}/operations/${res.body.operation.id}`)).body.operation;
          return o.status === 'done' || o.status === 'error' ? o : null;
        },
        { timeoutMs: 180_000, what: 'the restore operation ended' },
      );
      const serverLogs = () => spawnSync('docker', ['logs', '--tail', '30', container], { encoding: 'utf8' });
      expect(op, `${JSON.stringify(op)}\n${serverLogs().stdout}${serverLogs().stderr}`).toMatchObject({
        status: 'done',
      });
      container = dockerPs([`${LABELS.addonId}=${addons.starter.id}`])[0].id;
      expect(psql('SELECT text FROM notes')).toBe('before');
      psql("INSERT INTO notes VALUES ('written after the restore')");
      expect(psql('SELECT count(*) FROM notes')).toBe('2');
      expect(docker('logs', container)).toContain(`point-in-time recovery to ${pgTime(new Date(target))}`);
      expect((await h.call('GET', `/v1/apps/${APP}/addons/${addons.starter.id}`)).body.addon.status).toBe('running');
    },
    LONG,
  );

  it('refuses what it cannot do, in the spec shapes', async () => {
    const id = addons.starter.id;
    const tok = addons.starter.token;
    const outside = await api('POST', `/databases/${id}/pitr/restore`, tok, {
      restore_time: new Date(Date.now() - 3_600_000).toISOString(),
    });
    expect(outside.status).toBe(422);
    expect(outside.body.errors.restore_time[0]).toMatch(/within the recovery window/);
    const future = await api('POST', `/databases/${id}/pitr/restore`, tok, {
      restore_time: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(future.status).toBe(422);
    const malformed = await api('POST', `/databases/${id}/pitr/restore`, tok, { restore_time: 'yesterday' });
    expect(malformed.status).toBe(422);
    expect(Object.keys(malformed.body.errors)).toEqual(['restore_time']);
    expect((await api('POST', `/databases/${id}/pitr/restore`, tok, '{not json')).status).toBe(400);
    const sandbox = await api('GET', `/databases/${addons.sandbox.id}/pitr/recovery_window`, addons.sandbox.token);
    expect(sandbox.status).toBe(400);
    expect(sandbox.body.error).toMatch(/not available on the plan postgresql-sandbox/);
    const redis = await api('POST', `/databases/${addons.redis.id}/pitr/restore`, addons.redis.token, {
      restore_time: new Date().toISOString(),
    });
    expect(redis.status).toBe(400);
    expect(redis.body.error).toMatch(/PostgreSQL databases only/);
    expect((await api('GET', `/databases/${id}/pitr/recovery_window`, null)).status).toBe(401);
    const other = await api('GET', `/databases/${id}/pitr/recovery_window`, addons.sandbox.token);
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ resource: 'database' });
  });
});
