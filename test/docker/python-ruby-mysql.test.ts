import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { c as tarCreate } from 'tar';
import { startEmulator, type Harness } from '../harness.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { removeInstance, docker, dockerPs, eventually } from '../support/docker-cli.ts';
import { FAST, archiveOf, copyFixture, routerGet, waitForAddon, waitForDeployment } from '../support/apps.ts';

// Issue #15 for the other languages and MySQL: Python and Ruby apps (standard library only) built by
// the buildpack-like build with their default web process, reading a real Redis; a dependency that
// needs the (unreachable) package index fails the build with a clear message; a MySQL addon is a
// real MariaDB server the app's variable points at.
const LONG = 900_000;
const ADMIN = 'admin-token-for-addon-tests-000000';
const addonContainer = (addonId: string) => dockerPs([`${LABELS.addonId}=${addonId}`], true)[0];

describe('Python and Ruby apps, MySQL (real Docker, Debian-built images)', () => {
  let h: Harness;
  let instance = '';
  const files: string[] = [];
  const redisOf: Record<string, { container: string; password: string }> = {};

  const deploy = async (app: string, archive: string) => {
    expect(
      (await h.call('POST', `/v1/apps/${app}/deployments`, { body: { deployment: { source_url: archive } } })).status,
    ).toBe(201);
    const d = await waitForDeployment(h, app, undefined, LONG);
    return { d, output: (await h.call('GET', `/v1/apps/${app}/deployments/${d.id}/output`)).text as string };
  };
  const withRedis = async (app: string) => {
    await h.call('POST', '/v1/apps', { body: { app: { name: app } } });
    const add = await h.call('POST', `/v1/apps/${app}/addons`, {
      body: { addon: { addon_provider_id: 'scalingo-redis', plan_id: 'redis-sandbox' } },
    });
    await waitForAddon(h.call, app, add.body.addon.id, LONG);
    const url = (await h.call('GET', `/v1/apps/${app}/variables`)).body.variables.find(
      (v: { name: string }) => v.name === 'REDIS_URL',
    ).value;
    redisOf[app] = {
      container: addonContainer(add.body.addon.id).id,
      password: decodeURIComponent(new URL(url).password),
    };
  };
  const redisCli = (app: string, ...args: string[]) =>
    docker('exec', redisOf[app].container, 'redis-cli', '-a', redisOf[app].password, '--no-auth-warning', ...args);

  beforeAll(async () => {
    h = await startEmulator({
      adminToken: ADMIN,
      intervals: { ...FAST, bootTimeoutMs: 60_000 },
      addons: { servers: true },
    });
    instance = h.emu.instanceId;
  });
  afterAll(async () => {
    for (const app of ['py-web', 'rb-web', 'my-app', 'py-deps'])
      await h.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
    await h.stop();
    removeInstance(instance);
    for (const f of files) rmSync(f, { recursive: true, force: true });
  }, LONG);

  it(
    'a Python app: detected, default web process, answers through the router with what redis-cli wrote',
    async () => {
      await withRedis('py-web');
      redisCli('py-web', 'SET', 'greeting', 'hello from redis-cli');
      const archive = await archiveOf('python-web');
      files.push(archive);
      const { d, output } = await deploy('py-web', archive);
      expect(d.status, output).toBe('success');
      expect(output).toContain('-----> Python app detected');
      expect(output).toContain('No dependencies to install');
      expect(output).toContain('Process types: web (python3 app.py)');
      // (The boot check's own request counted a hit already: the counter is compared with Redis itself.)
      const res = await routerGet(h.emu.urls.routerPort, 'py-web');
      const body = JSON.parse(res.body);
      expect(body).toMatchObject({ language: 'python', greeting: 'hello from redis-cli' });
      expect(redisCli('py-web', 'GET', 'python-hits')).toBe(String(body.hits));
    },
    LONG,
  );

  it(
    'a Ruby app: detected, bundler runs offline, default web process reads Redis',
    async () => {
      await withRedis('rb-web');
      redisCli('rb-web', 'SET', 'greeting', 'hi ruby');
      const archive = await archiveOf('ruby-web');
      files.push(archive);
      const { d, output } = await deploy('rb-web', archive);
      expect(d.status, output).toBe('success');
      expect(output).toContain('-----> Ruby app detected');
      expect(output).toContain('Process types: web (bundle exec ruby app.rb)');
      const res = await routerGet(h.emu.urls.routerPort, 'rb-web');
      const body = JSON.parse(res.body);
      expect(body).toMatchObject({ language: 'ruby', greeting: 'hi ruby' });
      expect(redisCli('rb-web', 'GET', 'ruby-hits')).toBe(String(body.hits));
    },
    LONG,
  );

  it(
    'a Python dependency that needs the package index fails the build with a message saying so',
    async () => {
      await h.call('POST', '/v1/apps', { body: { app: { name: 'py-deps' } } });
      const dir = copyFixture('python-web');
      files.push(dir);
      writeFileSync(join(dir, 'requirements.txt'), 'flask==3.0.0\n');
      const archive = join(mkdtempSync(join(tmpdir(), 'emu-archive-')), 'py-deps.tar.gz');
      files.push(archive);
      await tarCreate({ gzip: true, file: archive, cwd: dir }, ['.']);
      const { d, output } = await deploy('py-deps', archive);
      expect(d.status).toBe('build-error');
      expect(output).toContain('The Python package index (PyPI) cannot be reached from the emulator');
      expect(output).toContain('pip download -d vendor');
    },
    LONG,
  );

  it(
    'a MySQL addon is a real MariaDB server: the app variable points at it, the database answers as its user',
    async () => {
      await h.call('POST', '/v1/apps', { body: { app: { name: 'my-app' } } });
      const add = await h.call('POST', '/v1/apps/my-app/addons', {
        body: { addon: { addon_provider_id: 'scalingo-mysql', plan_id: 'mysql-sandbox' } },
      });
      expect(add.body.variables).toEqual(['SCALINGO_MYSQL_URL']);
      await waitForAddon(h.call, 'my-app', add.body.addon.id, LONG);
      const url = new URL(
        (await h.call('GET', '/v1/apps/my-app/variables')).body.variables.find(
          (v: { name: string }) => v.name === 'SCALINGO_MYSQL_URL',
        ).value,
      );
      expect(url.protocol).toBe('mysql:');
      const c = addonContainer(add.body.addon.id).id;
      const db = url.pathname.slice(1);
      const sql = (q: string) =>
        docker(
          'exec',
          c,
          'mariadb',
          '-h',
          '127.0.0.1',
          '-u',
          url.username,
          `-p${decodeURIComponent(url.password)}`,
          db,
          '-N',
          '-e',
          q,
        );
      sql("CREATE TABLE t (v VARCHAR(20)); INSERT INTO t VALUES ('kept')");
      expect(sql('SELECT v FROM t')).toBe('kept');
      // The server restarts on its volume with the data.
      docker('restart', c);
      await eventually(
        () => {
          try {
            return sql('SELECT v FROM t') === 'kept';
          } catch {
            return false;
          }
        },
        { timeoutMs: 60_000, what: 'mysql back with its data' },
      );
    },
    LONG,
  );

  it(
    "a control-plane reset removes the addon servers, their volumes and the apps' networks too",
    async () => {
      const servers = dockerPs([`${LABELS.owner}=${instance}`, `${LABELS.addonId}`], true);
      expect(servers.length).toBeGreaterThan(0);
      const volumes = servers.map((c) => docker('inspect', '-f', '{{range .Mounts}}{{.Name}}{{end}}', c.id));
      expect((await h.call('POST', '/_emulator/reset', { as: { bearer: ADMIN } })).status).toBe(204);
      await eventually(() => dockerPs([`${LABELS.owner}=${instance}`, `${LABELS.addonId}`], true).length === 0, {
        timeoutMs: 60_000,
        what: 'the addon servers to go',
      });
      await eventually(
        () => {
          const left = docker('volume', 'ls', '-q').split('\n');
          return (
            volumes.every((v) => !left.includes(v)) &&
            !docker('network', 'ls', '--format', '{{.Name}}').includes(`scalingo-emu-${instance}-`)
          );
        },
        { timeoutMs: 30_000, what: 'their volumes and networks to go' },
      );
    },
    LONG,
  );
});
