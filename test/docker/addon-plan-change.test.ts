import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FAST, waitForAddon } from '../support/apps.ts';
import { docker, dockerPs, eventually, giveUp, removeInstance } from '../support/docker-cli.ts';

// addons-upgrade of an addon whose server runs (issue 22): the server is stopped and brought up again with the
// plan's memory, the addon `updating` meanwhile, then `running` — or `error` with the reason in its
// status_message when the server does not come back. Observed in Docker, psql and redis-cli.
const LONG = 600_000;
const APP = 'plan-change-app';
const MiB = 1024 * 1024;
const PGDATA = '/var/lib/postgresql/data/pgdata';

describe('plan changes of real addon servers (real Docker)', () => {
  let h: Harness;
  let instance = '';
  const ids = { postgresql: '', redis: '' };
  const serverOf = (addonId: string) => dockerPs([`${LABELS.addonId}=${addonId}`], true)[0];
  const addon = async (id: string) => (await h.call('GET', `/v1/apps/${APP}/addons/${id}`)).body.addon;
  const upgrade = (id: string, plan: string) =>
    h.call('PATCH', `/v1/apps/${APP}/addons/${id}`, { body: { addon: { plan_id: plan } } });
  let pgDatabase = '';
  let redisPassword = '';
  const psql = (sql: string) =>
    docker('exec', '-u', 'postgres', serverOf(ids.postgresql).id, 'psql', '-d', pgDatabase, '-tAc', sql);
  const redis = (...args: string[]) =>
    docker('exec', serverOf(ids.redis).id, 'redis-cli', '-a', redisPassword, '--no-auth-warning', ...args);
  /** Waits for the addon to leave `updating`/`provisioning`; its final JSON. */
  const settled = (id: string) =>
    eventually(
      async () => {
        const a = await addon(id);
        return a.status === 'running' || a.status === 'error' ? a : null;
      },
      { timeoutMs: 300_000, intervalMs: 250, what: `addon ${id} running or in error` },
    );

  /** A database API call as go-scalingo makes it (SCALINGO_DB_URL=<api>), with the addon's bearer token. */
  const dbApi = async (id: string, path: string, token: string) => {
    const res = await fetch(`${h.api}/api/databases/${id}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
  };
  const addonToken = async (id: string) => {
    const res = await h.call('POST', `/v1/apps/${APP}/addons/${id}/token`);
    expect(res.status, res.text).toBe(200);
    return res.body.addon.token as string;
  };

  beforeAll(async () => {
    h = await startEmulator({ addons: { servers: true }, intervals: FAST });
    instance = h.emu.instanceId;
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: APP } } })).status).toBe(201);
    for (const [kind, plan] of [
      ['postgresql', 'postgresql-sandbox'],
      ['redis', 'redis-sandbox'],
    ] as const) {
      const add = await h.call('POST', `/v1/apps/${APP}/addons`, {
        body: { addon: { addon_provider_id: `scalingo-${kind}`, plan_id: plan } },
      });
      expect(add.status, add.text).toBe(201);
      ids[kind] = add.body.addon.id;
    }
    await Promise.all(Object.values(ids).map((id) => waitForAddon(h.call, APP, id, LONG)));
    const vars = Object.fromEntries(
      (await h.call('GET', `/v1/apps/${APP}/variables`)).body.variables.map((v: { name: string; value: string }) => [
        v.name,
        v.value,
      ]),
    );
    pgDatabase = new URL(vars.SCALINGO_POSTGRESQL_URL).pathname.slice(1);
    redisPassword = decodeURIComponent(new URL(vars.SCALINGO_REDIS_URL).password);
  }, LONG);

  afterAll(async () => {
    await h.call('DELETE', `/v1/apps/${APP}?current_name=${APP}`).catch(() => undefined);
    await h.stop();
    removeInstance(instance);
  }, LONG);

  it(
    'a plan change restarts each server with the new memory: updating, then running on the same data (psql, redis-cli)',
    async () => {
      psql("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before the upgrade')");
      expect(redis('SET', 'kept', 'before the upgrade')).toBe('OK');
      const started = {
        pg: docker('inspect', '-f', '{{.State.StartedAt}}', serverOf(ids.postgresql).id),
        redis: docker('inspect', '-f', '{{.State.StartedAt}}', serverOf(ids.redis).id),
      };

      const pg = await upgrade(ids.postgresql, 'postgresql-starter-512');
      expect(pg.status, pg.text).toBe(200);
      expect((await addon(ids.postgresql)).status).toBe('updating');
      expect((await upgrade(ids.redis, 'redis-starter-256')).status).toBe(200);
      for (const id of Object.values(ids)) expect(await settled(id)).toMatchObject({ status: 'running' });

      const pgServer = serverOf(ids.postgresql);
      expect(pgServer.state).toBe('running');
      expect(docker('inspect', '-f', '{{.HostConfig.Memory}}', pgServer.id)).toBe(String(512 * MiB));
      expect(docker('inspect', '-f', '{{.State.StartedAt}}', pgServer.id)).not.toBe(started.pg);
      expect(psql('SELECT v FROM kept')).toBe('before the upgrade');
      expect(docker('inspect', '-f', '{{.State.StartedAt}}', serverOf(ids.redis).id)).not.toBe(started.redis);
      expect(redis('GET', 'kept')).toBe('before the upgrade');
      // The restart's stop was the emulator's own: no outage recorded, nothing left in a status message.
      const logs = (await h.call('GET', `/v1/apps/${APP}/addons/${ids.postgresql}/server/logs?n=1000`)).text;
      expect(logs).not.toMatch(/stopped unexpectedly/);
      expect((await addon(ids.postgresql)).status_message).toBeUndefined();
    },
    LONG,
  );

  it(
    'the Go CLI 1.48 right after addons-upgrade, no wait: logs --addon, logs-archives --addon, backups, database-users-list',
    async () => {
      // Each command's requests as the CLI sends them (db/logs.go, db/logs_archive.go, db/backups.go, db/users/list.go
      // through go-scalingo): the addon token, then the database API; users-list first shows the addon.
      const id = ids.postgresql;
      const db = (path: string, token: string) => dbApi(id, path, token);
      const token = () => addonToken(id);
      const before = docker('inspect', '-f', '{{.State.StartedAt}} {{.HostConfig.Memory}}', serverOf(id).id);
      expect((await upgrade(id, 'postgresql-sandbox')).status).toBe(200);
      expect((await addon(id)).status).toBe('updating');

      // logs --addon: the logs URL, then its dump.
      const logs = await db('/logs', await token());
      expect(logs.status).toBe(200);
      expect((await fetch(`${logs.body.url}&n=20`)).status).toBe(200);
      // logs-archives --addon, backups: the database API's own records.
      const archives = await db('/logs_archives?page=1', await token());
      expect(archives.status).toBe(200);
      expect(archives.body).toMatchObject({ has_more: false });
      const backups = await db('/backups', await token());
      expect(backups.status).toBe(200);
      expect(backups.body.database_backups).toEqual(expect.any(Array));
      // database-users-list: AddonShow, then the users, read from the server once it is back.
      expect((await h.call('GET', `/v1/apps/${APP}/addons/${id}`)).status).toBe(200);
      const users = await db('/users', await token());
      expect(users.status, JSON.stringify(users.body)).toBe(200);
      expect(users.body['database-users'].map((u: { name: string }) => u.name)).toContain('postgres');
      expect((await addon(id)).status).toBe('running');
      // Docker: the server did restart meanwhile, with the new plan's memory.
      const after = docker('inspect', '-f', '{{.State.StartedAt}} {{.HostConfig.Memory}}', serverOf(id).id).split(' ');
      const [startedBefore, memoryBefore] = before.split(' ');
      expect(after[0]).not.toBe(startedBefore);
      expect(after[1]).not.toBe(memoryBefore);
    },
    LONG,
  );

  it(
    'a server that does not come back from a plan change ends `error` with the reason; the next plan change brings it up',
    async () => {
      // A setting PostgreSQL refuses at start, read by the next start only (the running server never reloads it).
      const server = serverOf(ids.postgresql);
      docker(
        'exec',
        '-u',
        'postgres',
        server.id,
        'sh',
        '-c',
        `echo 'no_such_setting = on' >> ${PGDATA}/postgresql.conf`,
      );
      expect((await upgrade(ids.postgresql, 'postgresql-business-1024')).status).toBe(200);
      const failed = await settled(ids.postgresql);
      expect(failed.status).toBe('error');
      expect(failed.status_message).toMatch(
        /the postgresql server could not start: the postgresql server stopped \(exit code \d+\)/,
      );
      expect(serverOf(ids.postgresql).state).toBe('exited');
      // In `error`: the database API's records still answer; what needs the server is a 503 with Retry-After at once.
      const token = await addonToken(ids.postgresql);
      expect((await dbApi(ids.postgresql, '/backups', token)).status).toBe(200);
      const users = await dbApi(ids.postgresql, '/users', token);
      expect(users).toMatchObject({ status: 503, retryAfter: '5' });
      expect(users.body.error).toMatch(/is error: retry once the addon is running/);
      const refused = spawnSync('docker', ['logs', '--tail', '20', server.id], { encoding: 'utf8' });
      expect(refused.stdout + refused.stderr).toMatch(/unrecognized configuration parameter "no_such_setting"/);

      // The setting removed from the volume (the server is stopped: a throwaway container mounts it), then a plan change.
      const volume = docker('inspect', '-f', '{{range .Mounts}}{{.Name}}{{end}}', server.id);
      docker(
        'run',
        '--rm',
        '-v',
        `${volume}:/d`,
        'scalingo-emulator/addon-postgresql:1',
        'sed',
        '-i',
        '/no_such_setting/d',
        '/d/pgdata/postgresql.conf',
      );
      expect((await upgrade(ids.postgresql, 'postgresql-starter-512')).status).toBe(200);
      await eventually(
        async () => {
          const a = await addon(ids.postgresql);
          if (a.status === 'error') throw giveUp(a.status_message ?? 'error without a message');
          return a.status === 'running';
        },
        { timeoutMs: 300_000, intervalMs: 250, what: 'the addon running again' },
      );
      expect(serverOf(ids.postgresql).state).toBe('running');
      expect(psql('SELECT v FROM kept')).toBe('before the upgrade');
    },
    LONG,
  );
});
