import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FAST } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// The database API of real PostgreSQL, MySQL (MariaDB) and Redis addons (issue 22), as go-scalingo calls
// it: backups made and downloaded, a backup restored into the running server, user passwords changed
// and reset, and the 503 of a server that is not ready — proven with psql, mariadb and redis-cli in
// the servers' containers.
const APP = 'db-restore-app';
const LONG = 900_000;
type Kind = 'postgresql' | 'mysql' | 'redis';
interface Db {
  id: string;
  container: string;
  token: string;
  url: URL;
}

describe('backups, restore and user passwords of real addon servers (real Docker)', () => {
  let h: Harness;
  let instance = '';
  const dataDir = mkdtempSync(join(tmpdir(), 'emu-db-restore-'));
  const work = mkdtempSync(join(tmpdir(), 'emu-db-restore-work-'));
  const dbs = {} as Record<Kind, Db>;
  const firstAnswers = {} as Record<Kind, number>;

  const api = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${h.emu.urls.api}/api${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const exec = (container: string, cmd: string[], env: Record<string, string> = {}) => {
    const r = spawnSync(
      'docker',
      ['exec', ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]), container, ...cmd],
      { encoding: 'utf8' },
    );
    return { code: r.status, out: r.stdout.trim(), err: r.stderr.trim() };
  };
  const psql = (sql: string, user = 'postgres', password?: string) =>
    exec(
      dbs.postgresql.container,
      ['psql', '-h', '127.0.0.1', '-U', user, '-d', dbs.postgresql.url.pathname.slice(1), '-tAc', sql],
      { PGPASSWORD: password ?? dbs.postgresql.url.password },
    );
  const mariadb = (sql: string, user = dbs.mysql.url.username, password = dbs.mysql.url.password) =>
    exec(dbs.mysql.container, [
      'mariadb',
      '-h',
      '127.0.0.1',
      '-u',
      user,
      `-p${password}`,
      '-N',
      '-B',
      dbs.mysql.url.pathname.slice(1),
      '-e',
      sql,
    ]);
  const redis = (...args: string[]) =>
    exec(dbs.redis.container, ['redis-cli', '-a', dbs.redis.url.password, '--no-auth-warning', ...args]).out;

  async function backup(kind: Kind): Promise<{ id: string; files: string[]; dir: string }> {
    const db = dbs[kind];
    const created = await api('POST', `/databases/${db.id}/backups`, db.token);
    expect(created.status).toBe(201);
    const id = created.body.database_backup.id as string;
    await eventually(
      async () => {
        const b = (await api('GET', `/backups/${id}`, db.token)).body.database_backup;
        if (b.status === 'error') throw new Error(`${kind} backup failed`);
        return b.status === 'done';
      },
      { timeoutMs: 120_000, what: `${kind} backup done` },
    );
    const { download_url } = (await api('GET', `/databases/${db.id}/backups/${id}/archive`, db.token)).body;
    const res = await fetch(download_url);
    expect(res.status).toBe(200);
    const dir = mkdtempSync(join(work, `${kind}-`));
    writeFileSync(join(dir, 'backup.tar.gz'), Buffer.from(await res.arrayBuffer()));
    execFileSync('tar', ['xzf', join(dir, 'backup.tar.gz'), '-C', dir]);
    return { id, dir, files: readdirSync(dir).filter((f) => f !== 'backup.tar.gz') };
  }

  async function restore(kind: Kind, backupId: string): Promise<void> {
    const db = dbs[kind];
    const started = await api('POST', `/databases/${db.id}/backups/${backupId}/restore`, db.token);
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const done = await eventually(
      async () => {
        const r = (await api('GET', `/databases/${db.id}/restores/${started.body.restore.id}`, db.token)).body.restore;
        return r.status === 'running' ? null : r;
      },
      { timeoutMs: 120_000, what: `${kind} restore ended` },
    );
    expect(done, JSON.stringify(done)).toMatchObject({ status: 'done', error: '', backup_id: backupId });
    expect((await api('GET', `/databases/${db.id}`, db.token)).body.database.status).toBe('running');
  }

  beforeAll(async () => {
    h = await startEmulator({ inMemory: false, dataDir, intervals: FAST, addons: { servers: true } });
    instance = h.emu.instanceId;
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: APP } } })).status).toBe(201);
    const vars = async () =>
      (await h.call('GET', `/v1/apps/${APP}/variables`)).body.variables as { name: string; value: string }[];
    await Promise.all(
      (['postgresql', 'mysql', 'redis'] as Kind[]).map(async (kind) => {
        const add = await h.call('POST', `/v1/apps/${APP}/addons`, {
          body: { addon: { addon_provider_id: `scalingo-${kind}`, plan_id: `${kind}-sandbox` } },
        });
        expect(add.status).toBe(201);
        const id = add.body.addon.id as string;
        const token = (await h.call('POST', `/v1/apps/${APP}/addons/${id}/token`)).body.addon.token as string;
        // Asked at once, while the server starts: it waits for the start (200), or past the wait a 503 {error}; never a 500.
        const early = await api('GET', `/databases/${id}/users`, token);
        firstAnswers[kind] = early.status;
        await eventually(
          async () => {
            const status = (await h.call('GET', `/v1/apps/${APP}/addons/${id}`)).body.addon.status;
            if (status === 'error') throw new Error(`the ${kind} server failed to start`);
            return status === 'running';
          },
          { timeoutMs: 600_000, what: `${kind} addon running` },
        );
        const url = new URL((await vars()).find((v) => v.name === `SCALINGO_${kind.toUpperCase()}_URL`)!.value);
        dbs[kind] = { id, token, url, container: dockerPs([`${LABELS.addonId}=${id}`])[0].id };
      }),
    );
  }, LONG);

  afterAll(async () => {
    await h.call('DELETE', `/v1/apps/${APP}?current_name=${APP}`).catch(() => undefined);
    await h.stop();
    if (instance) removeInstance(instance);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }, LONG);

  it('a database call made while the server is still starting waits for it (or 503 {error}), never a 500', () => {
    for (const status of Object.values(firstAnswers)) expect([200, 503]).toContain(status);
    expect(Object.keys(firstAnswers).sort()).toEqual(['mysql', 'postgresql', 'redis']);
  });

  it(
    'PostgreSQL: the backup is a pg_dump custom-format file; restoring it brings back the rows changed since (psql)',
    async () => {
      expect(
        psql(
          "CREATE TABLE widgets (name text); INSERT INTO widgets VALUES ('sprocket-42');",
          dbs.postgresql.url.username,
        ).code,
      ).toBe(0);
      const b = await backup('postgresql');
      expect(b.files).toEqual([`${dbs.postgresql.url.pathname.slice(1)}.pgsql`]);
      const listed = execFileSync('pg_restore', ['--list', join(b.dir, b.files[0])], { encoding: 'utf8' });
      expect(listed).toMatch(/TABLE public widgets/);
      psql(
        "DELETE FROM widgets; INSERT INTO widgets VALUES ('after-backup'); CREATE TABLE extra (n int);",
        dbs.postgresql.url.username,
      );
      await restore('postgresql', b.id);
      expect(psql('SELECT name FROM widgets', dbs.postgresql.url.username).out).toBe('sprocket-42');
      // The restored table belongs to the addon's user, as before.
      expect(
        psql("SELECT tableowner FROM pg_tables WHERE tablename = 'widgets'", dbs.postgresql.url.username).out,
      ).toBe(dbs.postgresql.url.username);
    },
    LONG,
  );

  it(
    'MySQL: the backup holds the mariadb-dump; restoring it brings back the rows (mariadb)',
    async () => {
      expect(mariadb("CREATE TABLE gadgets (name VARCHAR(32)); INSERT INTO gadgets VALUES ('gizmo-7');").code).toBe(0);
      const b = await backup('mysql');
      expect(b.files).toEqual([`${dbs.mysql.url.pathname.slice(1)}.sql`]);
      mariadb("DELETE FROM gadgets; INSERT INTO gadgets VALUES ('after-backup');");
      await restore('mysql', b.id);
      expect(mariadb('SELECT name FROM gadgets').out).toBe('gizmo-7');
    },
    LONG,
  );

  it(
    'Redis: the backup is an RDB snapshot; restoring it replaces the data set, kept across a restart (redis-cli)',
    async () => {
      redis('SET', 'colour', 'blue');
      const b = await backup('redis');
      expect(b.files).toEqual(['dump.rdb']);
      redis('SET', 'colour', 'red');
      redis('SET', 'later', '1');
      await restore('redis', b.id);
      expect(redis('GET', 'colour')).toBe('blue');
      expect(redis('EXISTS', 'later')).toBe('0');
      // The append-only file was rewritten from the restored data: a restart keeps it.
      docker('restart', dbs.redis.container);
      await eventually(() => redis('PING') === 'PONG', { timeoutMs: 60_000, what: 'redis back' });
      expect(redis('GET', 'colour')).toBe('blue');
    },
    LONG,
  );

  it("refuses restores of unknown or unfinished backups, and another addon's", async () => {
    const pg = dbs.postgresql;
    expect((await api('POST', `/databases/${pg.id}/backups/nope/restore`, pg.token)).body).toMatchObject({
      resource: 'backup',
    });
    const mysqlBackup = (await api('GET', `/databases/${dbs.mysql.id}/backups`, dbs.mysql.token)).body
      .database_backups[0].id;
    expect((await api('POST', `/databases/${pg.id}/backups/${mysqlBackup}/restore`, pg.token)).status).toBe(404);
    expect((await api('POST', `/databases/${dbs.mysql.id}/backups/${mysqlBackup}/restore`, pg.token)).status).toBe(404);
    expect((await api('GET', `/databases/${pg.id}/restores/nope`, pg.token)).body).toMatchObject({
      resource: 'restore',
    });
  });

  it(
    'database-users-update-password and reset: the server takes the new password (psql, mariadb); bad input refused',
    async () => {
      for (const kind of ['postgresql', 'mysql'] as const) {
        const db = dbs[kind];
        const created = await api('POST', `/databases/${db.id}/users`, db.token, {
          database_user: { name: 'reporter_1', read_only: true },
        });
        expect(created.status).toBe(201);
        const login = (password: string) =>
          kind === 'postgresql'
            ? psql('SELECT 1', 'reporter_1', password)
            : mariadb('SELECT 1', 'reporter_1', password);
        expect(login(created.body.database_user.password).code).toBe(0);

        const password = 'A-new-password-of-24-chars';
        const updated = await api('PATCH', `/databases/${db.id}/users/reporter_1`, db.token, {
          database_user: { database_id: db.id, password, password_confirmation: password },
        });
        expect(updated.status, JSON.stringify(updated.body)).toBe(200);
        expect(updated.body.database_user, kind).toMatchObject({
          name: 'reporter_1',
          read_only: true,
          protected: false,
        });
        expect(login(password).code).toBe(0);
        expect(login(created.body.database_user.password).code).not.toBe(0);

        const reset = await api('POST', `/databases/${db.id}/users/reporter_1/reset_password`, db.token);
        expect(reset.status).toBe(200);
        expect(reset.body.database_user.password).toMatch(/^\S{24,}$/);
        expect(login(reset.body.database_user.password).code).toBe(0);
        expect(login(password).code).not.toBe(0);

        const mismatch = await api('PATCH', `/databases/${db.id}/users/reporter_1`, db.token, {
          database_user: { password, password_confirmation: `${password}x` },
        });
        expect(mismatch.body.errors).toHaveProperty('password_confirmation');
        expect(
          (
            await api('PATCH', `/databases/${db.id}/users/reporter_1`, db.token, {
              database_user: { password: 'short', password_confirmation: 'short' },
            })
          ).body.errors,
        ).toHaveProperty('password');
        expect(
          (
            await api('PATCH', `/databases/${db.id}/users/nobody_here`, db.token, {
              database_user: { password, password_confirmation: password },
            })
          ).body,
        ).toMatchObject({ resource: 'user' });
        const own = await api('POST', `/databases/${db.id}/users/${db.url.username}/reset_password`, db.token);
        expect(own.status).toBe(400);
        expect(own.body.error).toMatch(/protected/);
      }
      // Redis: no user management, as on the platform (the CLI refuses before asking).
      expect(
        (await api('GET', `/databases/${dbs.redis.id}/users`, dbs.redis.token)).body['database-users'].map(
          (u: { name: string }) => u.name,
        ),
      ).toEqual(['default']);
      expect(
        (await api('POST', `/databases/${dbs.redis.id}/users/default/reset_password`, dbs.redis.token)).status,
      ).toBe(400);
    },
    LONG,
  );

  it(
    'force-ssl on MySQL and Redis: connections without TLS refused, with TLS accepted, the database API still served; then off',
    async () => {
      const { username, password } = dbs.mysql.url;
      const mysqlOver = (tls: '--ssl' | '--skip-ssl', sql: string) =>
        exec(dbs.mysql.container, [
          'mariadb',
          tls,
          '-h',
          '127.0.0.1',
          '-u',
          username,
          `-p${password}`,
          '-N',
          '-e',
          sql,
        ]);
      const plainMysql = () => mysqlOver('--skip-ssl', 'SELECT 1');
      const tlsMysql = () => mysqlOver('--ssl', "SHOW STATUS LIKE 'Ssl_version'");
      const redisPing = (...tls: string[]) =>
        exec(
          dbs.redis.container,
          ['redis-cli', ...tls, '-h', '127.0.0.1', '-a', dbs.redis.url.password].concat(['--no-auth-warning', 'ping']),
        ).out;
      expect(plainMysql().out).toBe('1');
      expect(redisPing()).toBe('PONG');
      for (const kind of ['mysql', 'redis'] as const) {
        const on = await api('POST', `/databases/${dbs[kind].id}/features`, dbs[kind].token, {
          feature: { name: 'force-ssl' },
        });
        expect(on.status, JSON.stringify(on.body)).toBe(200);
        expect(on.body).toMatchObject({ name: 'force-ssl', status: 'ACTIVATED' });
      }
      expect(plainMysql().code).not.toBe(0);
      expect(tlsMysql().out).toMatch(/^Ssl_version\s+TLSv1\.[23]$/);
      expect(redisPing()).not.toBe('PONG');
      expect(redisPing('--tls', '--insecure')).toBe('PONG');
      // The emulator's own calls (users, backups) do not go over TCP: still served.
      expect((await api('GET', `/databases/${dbs.mysql.id}/users`, dbs.mysql.token)).status).toBe(200);
      expect((await backup('redis')).files).toEqual(['dump.rdb']);
      for (const kind of ['mysql', 'redis'] as const)
        expect(
          (await api('DELETE', `/databases/${dbs[kind].id}/features?feature=force-ssl`, dbs[kind].token)).status,
        ).toBe(200);
      expect(plainMysql().out).toBe('1');
      expect(redisPing()).toBe('PONG');
    },
    LONG,
  );

  it(
    'a server stopped outside the emulator: what needs it waits for its restart (or 503 with retry), then 200',
    async () => {
      const db = dbs.mysql;
      docker('stop', db.container);
      // The emulator notices the stop and starts the server again on its data.
      await eventually(
        async () =>
          ['stopped', 'creating'].includes((await api('GET', `/databases/${db.id}`, db.token)).body.database.status),
        { timeoutMs: 60_000, what: 'the emulator to notice the stopped server' },
      );
      // The users list needs the server: it waits for the restart (issue 37), or past the wait answers 503 saying retry.
      const users = await api('GET', `/databases/${db.id}/users`, db.token);
      if (users.status !== 200) {
        expect(users.status).toBe(503);
        expect(users.body.error).toMatch(/retry/);
      }
      await eventually(async () => (await api('GET', `/databases/${db.id}/users`, db.token)).status === 200, {
        timeoutMs: 120_000,
        what: 'mysql answering again',
      });
      expect(dockerPs([`${LABELS.addonId}=${db.id}`])[0]?.state).toBe('running');
    },
    LONG,
  );
});
