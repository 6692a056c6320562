import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FAST } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';
import { freePort } from '../support/free-port.ts';
import { type Running, ssh, sshOptions, start } from '../support/git-cli.ts';
import { keyPair } from '../support/ssh-keys.ts';

// The database API of a REAL PostgreSQL addon (issue #15) as go-scalingo calls it: backups made by
// pg_dump and downloaded from a signed URL, the server's users, its logs URL, and db-tunnel's
// direct-tcpip forward through the SSH endpoint — observed with psql in the container, tar on the
// archive and psql on the host through the real `ssh -L`.
const APP = 'db-api-app';
const LONG = 900_000;
const psqlIn = (container: string, db: string, sql: string) =>
  docker('exec', '-u', 'postgres', container, 'psql', '-d', db, '-tAc', sql);
const spawnIn = (container: string, cmd: string[]) =>
  spawnSync('docker', ['exec', container, ...cmd], { encoding: 'utf8' });
describe('database API of a real PostgreSQL addon (real Docker)', () => {
  let h: Harness;
  let instance = '';
  let sshPort = 0;
  const dataDir = mkdtempSync(join(tmpdir(), 'emu-db-api-'));
  const work = mkdtempSync(join(tmpdir(), 'emu-db-api-work-'));
  const dev = keyPair('ed25519', 'dev@db');
  const other = keyPair('ed25519', 'other@db');
  let pg: { id: string; container: string; url: URL; token: string };
  let standIn: { id: string; token: string };
  const tunnels: Running[] = [];
  const api = (path: string, token: string, method = 'GET') =>
    fetch(`${h.emu.urls.api}/api${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    });

  beforeAll(async () => {
    h = await startEmulator({
      inMemory: false,
      dataDir,
      intervals: { ...FAST, bootTimeoutMs: 60_000 },
      addons: { servers: true },
    });
    instance = h.emu.instanceId;
    sshPort = Number(new URL(h.emu.urls.git!.replace(/^ssh:/, 'http:')).port);
    expect(
      (await h.call('POST', '/v1/keys', { body: { key: { name: 'laptop', content: dev.publicKey } } })).status,
    ).toBe(201);
    expect(
      (await h.call('POST', '/v1/keys', { as: 'other', body: { key: { name: 'laptop', content: other.publicKey } } }))
        .status,
    ).toBe(201);
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: APP } } })).status).toBe(201);
    const add = await h.call('POST', `/v1/apps/${APP}/addons`, {
      body: { addon: { addon_provider_id: 'scalingo-postgresql', plan_id: 'postgresql-sandbox' } },
    });
    expect(add.status).toBe(201);
    const id = add.body.addon.id as string;
    await eventually(
      async () => {
        const status = (await h.call('GET', `/v1/apps/${APP}/addons/${id}`)).body.addon.status;
        if (status === 'error') throw new Error('the addon server failed to start');
        return status === 'running';
      },
      { timeoutMs: 600_000, what: 'postgresql addon running' },
    );
    const vars = (await h.call('GET', `/v1/apps/${APP}/variables`)).body.variables as { name: string; value: string }[];
    const url = new URL(vars.find((v) => v.name === 'SCALINGO_POSTGRESQL_URL')!.value);
    const token = (await h.call('POST', `/v1/apps/${APP}/addons/${id}/token`)).body.addon.token as string;
    pg = { id, container: dockerPs([`${LABELS.addonId}=${id}`])[0].id, url, token };
    const s = await h.call('POST', `/v1/apps/${APP}/addons`, {
      body: { addon: { addon_provider_id: 'scalingo-mongodb', plan_id: 'mongo-sandbox' } },
    });
    standIn = {
      id: s.body.addon.id,
      token: (await h.call('POST', `/v1/apps/${APP}/addons/${s.body.addon.id}/token`)).body.addon.token,
    };
    psqlIn(
      pg.container,
      pg.url.pathname.slice(1),
      `CREATE TABLE widgets (name text); INSERT INTO widgets VALUES ('sprocket-42'); ALTER TABLE widgets OWNER TO "${url.username}";`,
    );
  }, LONG);

  afterAll(async () => {
    for (const t of tunnels) t.proc.kill('SIGKILL');
    await h.call('DELETE', `/v1/apps/${APP}?current_name=${APP}`).catch(() => undefined);
    await h.stop();
    if (instance) removeInstance(instance);
    for (const d of [dataDir, work, dev.dir, other.dir]) rmSync(d, { recursive: true, force: true });
  }, LONG);

  it(
    'creates a backup with pg_dump and serves it from a signed URL; the archive holds the table made with psql',
    async () => {
      const created = await api(`/databases/${pg.id}/backups`, pg.token, 'POST');
      expect(created.status).toBe(201);
      const backup = (await created.json()).database_backup;
      expect(backup).toMatchObject({ database_id: pg.id, method: 'manual' });
      expect(['scheduled', 'running', 'done']).toContain(backup.status);
      const done = await eventually(
        async () => {
          const b = (await (await api(`/backups/${backup.id}`, pg.token)).json()).database_backup;
          if (b.status === 'error') throw new Error('backup failed');
          return b.status === 'done' ? b : null;
        },
        { timeoutMs: 120_000, what: 'backup done' },
      );
      expect(done.size).toBeGreaterThan(0);
      const list = (await (await api(`/databases/${pg.id}/backups`, pg.token)).json()).database_backups;
      expect(list.map((b: { id: string }) => b.id)).toEqual([backup.id]);

      const { download_url } = await (await api(`/databases/${pg.id}/backups/${backup.id}/archive`, pg.token)).json();
      const res = await fetch(download_url);
      expect(res.status).toBe(200);
      const file = join(work, 'backup.tar.gz');
      writeFileSync(file, Buffer.from(await res.arrayBuffer()));
      execFileSync('tar', ['xzf', file, '-C', work]);
      // A pg_dump custom-format file, as the platform's backups; pg_restore prints it back as SQL.
      const dump = execFileSync(
        'pg_restore',
        ['-f', '-', join(work, readdirSync(work).find((f) => f.endsWith('.pgsql'))!)],
        { encoding: 'utf8' },
      );
      expect(dump).toContain('CREATE TABLE public.widgets');
      expect(dump).toContain('sprocket-42');
      // The URL is the credential: a forged one is refused.
      const forged = new URL(download_url);
      forged.searchParams.set('token', `${backup.id}.forged`);
      expect((await fetch(forged)).status).toBe(401);
    },
    LONG,
  );

  it(
    "lists the server's real users (pg_authid), the addon's own user among them, protected",
    async () => {
      const res = await api(`/databases/${pg.id}/users`, pg.token);
      expect(res.status).toBe(200);
      const users = (await res.json())['database-users'] as {
        name: string;
        protected: boolean;
        dbms_attributes?: { password_encryption: string };
      }[];
      const own = users.find((u) => u.name === pg.url.username);
      expect(own).toMatchObject({ protected: true, dbms_attributes: { password_encryption: 'scram-sha-256' } });
      // A role made in the server shows up: the list is read from it.
      psqlIn(pg.container, 'postgres', "CREATE ROLE reporting LOGIN PASSWORD 'x'");
      const again = (await (await api(`/databases/${pg.id}/users`, pg.token)).json())['database-users'] as {
        name: string;
        protected: boolean;
      }[];
      expect(again.find((u) => u.name === 'reporting')).toMatchObject({ protected: false });
    },
    LONG,
  );

  it(
    'creates (read-only) and deletes a user in the server; protected users and bad names are refused',
    async () => {
      const post = (body: unknown, token = pg.token) =>
        fetch(`${h.emu.urls.api}/api/databases/${pg.id}/users`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const password = 'a-long-enough-password-1234';
      const created = await post({
        database_user: {
          database_id: pg.id,
          name: 'analyst',
          read_only: true,
          password,
          password_confirmation: password,
        },
      });
      expect(created.status).toBe(201);
      expect((await created.json()).database_user).toMatchObject({
        name: 'analyst',
        read_only: true,
        protected: false,
      });
      // The server itself knows the user: it logs in with its password, reads, and may not write.
      const asAnalyst = (sql: string) =>
        spawnIn(pg.container, [
          'env',
          `PGPASSWORD=${password}`,
          'psql',
          '-h',
          '127.0.0.1',
          '-U',
          'analyst',
          '-d',
          pg.url.pathname.slice(1),
          '-tAc',
          sql,
        ]);
      expect(asAnalyst('SELECT name FROM widgets').stdout.trim()).toBe('sprocket-42');
      expect(asAnalyst("INSERT INTO widgets VALUES ('nope')").stderr).toMatch(/permission denied/);
      const listed = (
        await (
          await fetch(`${h.emu.urls.api}/api/databases/${pg.id}/users`, {
            headers: { authorization: `Bearer ${pg.token}` },
          })
        ).json()
      )['database-users'];
      expect(listed.find((u: { name: string }) => u.name === 'analyst')).toMatchObject({
        read_only: true,
        protected: false,
      });
      expect(listed.find((u: { name: string }) => u.name === pg.url.username)).toMatchObject({ read_only: false });
      expect(
        (await post({ database_user: { name: 'analyst', password, password_confirmation: password } })).status,
      ).toBe(422);
      expect(
        (
          await post({
            database_user: { name: "x'; DROP TABLE widgets; --", password, password_confirmation: password },
          })
        ).status,
      ).toBe(422);
      expect(
        (
          await post({
            database_user: { name: 'another', password, password_confirmation: 'different-password-123456' },
          })
        ).status,
      ).toBe(422);
      const del = (name: string) =>
        fetch(`${h.emu.urls.api}/api/databases/${pg.id}/users/${name}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${pg.token}` },
        });
      expect((await del(pg.url.username)).status).toBe(400);
      expect((await del('nobody_here')).status).toBe(404);
      expect((await del('analyst')).status).toBe(204);
      expect(psqlIn(pg.container, 'postgres', "SELECT count(*) FROM pg_roles WHERE rolname = 'analyst'")).toBe('0');
    },
    LONG,
  );

  it(
    "gives a logs URL that returns the server's own lines",
    async () => {
      const { url } = await (await api(`/databases/${pg.id}/logs`, pg.token)).json();
      const u = new URL(url);
      u.searchParams.set('n', '200');
      const text = await eventually(
        async () => {
          const r = await fetch(u);
          const t = r.status === 200 ? await r.text() : '';
          return t.includes('ready to accept connections') ? t : null;
        },
        { timeoutMs: 30_000, what: 'addon log lines' },
      );
      expect(text).toMatch(/^\d{4}-\d\d-\d\d \S+ \+0000 UTC \[addon\] /m);
      // Followed (`logs --addon -f`): a WebSocket on the same URL gets the server's new lines as log events.
      const wsUrl = new URL(url);
      wsUrl.protocol = 'ws:';
      wsUrl.searchParams.set('stream', 'true');
      const ws = new WebSocket(wsUrl.toString());
      const events: string[] = [];
      ws.on('message', (m) => events.push(String(m)));
      ws.on('error', () => undefined);
      await new Promise((ok, no) => (ws.once('open', ok), ws.once('error', no)));
      psqlIn(pg.container, 'postgres', 'SELECT pg_catalog.pg_reload_conf()'); // PostgreSQL logs the reload
      await eventually(
        () => events.some((e) => JSON.parse(e).event === 'log' && /SIGHUP|reloading/.test(JSON.parse(e).log)),
        { timeoutMs: 30_000, what: 'a followed addon line' },
      );
      ws.close();
      u.searchParams.set('token', 'x.y');
      expect((await fetch(u)).status).toBe(401);
    },
    LONG,
  );

  it(
    "failure paths: wrong token, another addon's id, a stand-in addon, another user",
    async () => {
      expect((await api(`/databases/${pg.id}/backups`, 'adt.wrong')).status).toBe(401);
      expect((await api(`/databases/${standIn.id}/backups`, pg.token)).status).toBe(404);
      const standInRes = await api(`/databases/${standIn.id}/backups`, standIn.token);
      expect(standInRes.status).toBe(400);
      expect((await standInRes.json()).error).toMatch(/stand-in/);
      expect((await api(`/databases/${standIn.id}/users`, standIn.token)).status).toBe(400);
      expect((await h.call('POST', `/v1/apps/${APP}/addons/${pg.id}/token`, { as: 'other' })).status).toBe(404);
    },
    LONG,
  );

  it(
    'db-tunnel: ssh -L to the addon host reaches PostgreSQL; other targets and other users are refused',
    async () => {
      const port = await freePort();
      const target = `${pg.url.hostname}:${pg.url.port}`;
      const tunnel = start(
        'ssh',
        [
          ...sshOptions(dev.privateKey),
          '-p',
          String(sshPort),
          '-N',
          '-o',
          'ExitOnForwardFailure=yes',
          '-L',
          `127.0.0.1:${port}:${target}`,
          'git@127.0.0.1',
        ],
        { timeoutMs: 300_000 },
      );
      tunnels.push(tunnel);
      // psql runs asynchronously: the emulator answers the tunnel from this very process.
      const psqlHost = (sql: string) =>
        start(
          'psql',
          ['-h', '127.0.0.1', '-p', String(port), '-U', pg.url.username, '-d', pg.url.pathname.slice(1), '-tAc', sql],
          { env: { PGPASSWORD: decodeURIComponent(pg.url.password), PGCONNECT_TIMEOUT: '5' }, timeoutMs: 20_000 },
        ).done;
      let last = '';
      const row = await eventually(
        async () => {
          const r = await psqlHost('SELECT name FROM widgets');
          last = r.out;
          return r.code === 0 ? r.out.trim() : null;
        },
        { timeoutMs: 30_000, what: 'psql through the tunnel' },
      ).catch((err: Error) => {
        throw new Error(`${err.message}: ssh said ${tunnel.output()}; psql said ${last}`);
      });
      expect(row).toBe('sprocket-42');
      tunnel.proc.kill('SIGTERM');

      // -W asks for one direct-tcpip channel: a refused one makes ssh exit 255 ("stdio forwarding failed").
      const refused = async (key: string, to: string) => {
        const r = await ssh(sshPort, key, ['-W', to]);
        expect(r.code, r.out).toBe(255);
        expect(r.out).toMatch(/stdio forwarding failed|open failed/i);
      };
      // The same -W to the addon's own host:port is allowed (the control of the refusals below).
      const allowed = await ssh(sshPort, dev.privateKey, ['-W', target]);
      expect(allowed.out).not.toMatch(/stdio forwarding failed|open failed/i);
      expect(allowed.code, allowed.out).toBe(0);
      await refused(dev.privateKey, `${pg.url.hostname}:22`); // the addon host, another port
      await refused(dev.privateKey, `127.0.0.1:${sshPort}`); // the emulator itself
      await refused(dev.privateKey, `localhost:${docker('port', pg.container, '5432').split(':')[1]}`); // the published port, by address
      await refused(other.privateKey, target); // a user without access to the app
      // A limited collaborator may not reach the database either; a full collaborator may.
      const collab = (
        await h.call('POST', `/v1/apps/${APP}/collaborators`, {
          body: { collaborator: { email: 'other@example.test', is_limited: true } },
        })
      ).body.collaborator;
      expect(collab.status).toBe('accepted');
      await refused(other.privateKey, target);
      expect(
        (
          await h.call('PATCH', `/v1/apps/${APP}/collaborators/${collab.id}`, {
            body: { collaborator: { is_limited: false } },
          })
        ).status,
      ).toBe(200);
      const asCollaborator = await ssh(sshPort, other.privateKey, ['-W', target]);
      expect(asCollaborator.out).not.toMatch(/stdio forwarding failed|open failed/i);
      expect(asCollaborator.code, asCollaborator.out).toBe(0);
    },
    LONG,
  );
});
