// The stack and addon checks every image source must pass (issue #36: "the images made from the registry path and
// from the Debian path pass the same stack and addon tests"). Each check takes the emulator's harness and the docker
// CLI of the engine the emulator drives (the machine's for the Debian-path tests, the second engine's for the
// registry-path test), and observes the servers and the apps through that engine and the router.
import { expect } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness } from '../harness.ts';
import { routerGet, waitForAddon, waitForDeployment } from './apps.ts';
import { eventually } from './docker-cli.ts';

const LONG = 900_000;

/** An emulator and the docker CLI of its engine. */
export interface EngineUnderTest {
  h: Harness;
  cli: (...args: string[]) => string;
}

export interface PostgresServer {
  id: string;
  container: string;
  db: string;
}
export interface RedisServer {
  id: string;
  container: string;
  password: string;
}

/** The container (running or not) of an addon's server on the engine. */
export function addonContainerId(t: EngineUnderTest, addonId: string): string {
  return t.cli('ps', '-aq', '--no-trunc', '--filter', `label=${LABELS.addonId}=${addonId}`);
}

export const psql = (t: EngineUnderTest, pg: PostgresServer, sql: string) =>
  t.cli('exec', '-u', 'postgres', pg.container, 'psql', '-d', pg.db, '-tAc', sql);

export const redisCli = (t: EngineUnderTest, redis: RedisServer, ...args: string[]) =>
  t.cli('exec', redis.container, 'redis-cli', '-a', redis.password, '--no-auth-warning', ...args);

async function variables(t: EngineUnderTest, app: string): Promise<Record<string, string>> {
  const list = (await t.h.call('GET', `/v1/apps/${app}/variables`)).body.variables as { name: string; value: string }[];
  return Object.fromEntries(list.map((v) => [v.name, v.value]));
}

async function addAddon(t: EngineUnderTest, app: string, provider: string, plan: string) {
  const added = await t.h.call('POST', `/v1/apps/${app}/addons`, {
    body: { addon: { addon_provider_id: provider, plan_id: plan } },
  });
  expect(added.status, JSON.stringify(added.body)).toBe(201);
  return added.body as { addon: { id: string }; variables: string[] };
}

/**
 * PostgreSQL and Redis addons on `app` (which exists): servers running with the plan's memory, the app's variables
 * pointing at them, each database answering its own client in its container.
 */
export async function checkPostgresAndRedis(
  t: EngineUnderTest,
  app: string,
): Promise<{ pg: PostgresServer; redis: RedisServer }> {
  const addedPg = await addAddon(t, app, 'scalingo-postgresql', 'postgresql-sandbox');
  expect(addedPg.variables).toEqual(['SCALINGO_POSTGRESQL_URL', 'DATABASE_URL']);
  const addedRedis = await addAddon(t, app, 'scalingo-redis', 'redis-sandbox');
  expect(addedRedis.variables).toEqual(['SCALINGO_REDIS_URL', 'REDIS_URL']);
  for (const id of [addedPg.addon.id, addedRedis.addon.id]) await waitForAddon(t.h.call, app, id, 600_000);
  const vars = await variables(t, app);
  expect(vars.DATABASE_URL).toBe(vars.SCALINGO_POSTGRESQL_URL);
  expect(vars.DATABASE_URL).toMatch(/^postgres:\/\/[a-z0-9_]+:[^@]+@postgresql-[0-9a-f]{8}:5432\/[a-z0-9_]+$/);
  expect(vars.REDIS_URL).toMatch(/^redis:\/\/:[^@]+@redis-[0-9a-f]{8}:6379$/);
  const pgContainer = addonContainerId(t, addedPg.addon.id);
  expect(t.cli('inspect', '-f', '{{.State.Status}}', pgContainer)).toBe('running');
  expect(t.cli('inspect', '-f', '{{.HostConfig.Memory}}', pgContainer)).toBe(String(256 * 1024 * 1024));
  const pg = { id: addedPg.addon.id, container: pgContainer, db: new URL(vars.DATABASE_URL).pathname.slice(1) };
  expect(psql(t, pg, 'SELECT current_database()')).toBe(pg.db);
  const redis = {
    id: addedRedis.addon.id,
    container: addonContainerId(t, addedRedis.addon.id),
    password: decodeURIComponent(new URL(vars.REDIS_URL).password),
  };
  expect(redisCli(t, redis, 'PING')).toBe('PONG');
  return { pg, redis };
}

async function deploy(t: EngineUnderTest, app: string, archive: string) {
  const posted = await t.h.call('POST', `/v1/apps/${app}/deployments`, {
    body: { deployment: { source_url: archive } },
  });
  expect(posted.status).toBe(201);
  const d = await waitForDeployment(t.h, app, undefined, LONG);
  return { d, output: (await t.h.call('GET', `/v1/apps/${app}/deployments/${d.id}/output`)).text as string };
}

/**
 * The Node stack: `archive` (fixtures/apps/node-pg-redis) deployed on `app` with the buildpack-like build; it answers
 * through the router with a row written by psql and Redis's counter set by redis-cli (and counted once more).
 */
export async function checkNodeApp(
  t: EngineUnderTest,
  app: string,
  archive: string,
  { pg, redis }: { pg: PostgresServer; redis: RedisServer },
): Promise<string> {
  const { d, output } = await deploy(t, app, archive);
  expect(d.status, output).toBe('success');
  expect(output).toContain('-----> Node.js app detected');
  expect(output).toContain('-----> Installing dependencies\n       Installing node modules\n');
  expect(output).toContain('Process types: web (npm start)');
  psql(t, pg, "INSERT INTO notes (text) VALUES ('written with psql')");
  redisCli(t, redis, 'SET', 'hits', '41');
  const res = await routerGet(t.h.emu.urls.routerPort, app);
  expect(res.status, res.body).toBe(200);
  expect(JSON.parse(res.body)).toMatchObject({ container: 'web-1', notes: ['written with psql'], hits: 42 });
  expect(redisCli(t, redis, 'GET', 'hits')).toBe('42');
  return output;
}

/** A Redis addon on a new app `app`, as the Python and Ruby checks read it. */
export async function appWithRedis(t: EngineUnderTest, app: string): Promise<RedisServer> {
  expect((await t.h.call('POST', '/v1/apps', { body: { app: { name: app } } })).status).toBe(201);
  const added = await addAddon(t, app, 'scalingo-redis', 'redis-sandbox');
  await waitForAddon(t.h.call, app, added.addon.id, LONG);
  return {
    id: added.addon.id,
    container: addonContainerId(t, added.addon.id),
    password: decodeURIComponent(new URL((await variables(t, app)).REDIS_URL).password),
  };
}

/** The Python stack: fixtures/apps/python-web on `app` (with Redis) detected, its default web process reading Redis. */
export async function checkPythonApp(t: EngineUnderTest, app: string, archive: string, redis: RedisServer) {
  redisCli(t, redis, 'SET', 'greeting', 'hello from redis-cli');
  const { d, output } = await deploy(t, app, archive);
  expect(d.status, output).toBe('success');
  expect(output).toContain('-----> Python app detected');
  expect(output).toContain('No dependencies to install');
  expect(output).toContain('Process types: web (python3 app.py)');
  // (The boot check's own request counted a hit already: the counter is compared with Redis itself.)
  const body = JSON.parse((await routerGet(t.h.emu.urls.routerPort, app)).body);
  expect(body).toMatchObject({ language: 'python', greeting: 'hello from redis-cli' });
  expect(redisCli(t, redis, 'GET', 'python-hits')).toBe(String(body.hits));
}

/** The Ruby stack: fixtures/apps/ruby-web on `app` (with Redis), bundler offline, its default web process reading Redis. */
export async function checkRubyApp(t: EngineUnderTest, app: string, archive: string, redis: RedisServer) {
  redisCli(t, redis, 'SET', 'greeting', 'hi ruby');
  const { d, output } = await deploy(t, app, archive);
  expect(d.status, output).toBe('success');
  expect(output).toContain('-----> Ruby app detected');
  expect(output).toContain('Process types: web (bundle exec ruby app.rb)');
  const body = JSON.parse((await routerGet(t.h.emu.urls.routerPort, app)).body);
  expect(body).toMatchObject({ language: 'ruby', greeting: 'hi ruby' });
  expect(redisCli(t, redis, 'GET', 'ruby-hits')).toBe(String(body.hits));
}

/**
 * A MySQL addon on `app` (which exists) is a real MariaDB server: the app's variable points at it, the database
 * answers as its user, and the server restarted on its volume still has the data. Returns the addon's id.
 */
export async function checkMysqlAddon(t: EngineUnderTest, app: string): Promise<string> {
  const added = await addAddon(t, app, 'scalingo-mysql', 'mysql-sandbox');
  expect(added.variables).toEqual(['SCALINGO_MYSQL_URL']);
  await waitForAddon(t.h.call, app, added.addon.id, LONG);
  const url = new URL((await variables(t, app)).SCALINGO_MYSQL_URL);
  expect(url.protocol).toBe('mysql:');
  const c = addonContainerId(t, added.addon.id);
  const password = `-p${decodeURIComponent(url.password)}`;
  const sql = (q: string) =>
    t.cli('exec', c, 'mariadb', '-h', '127.0.0.1', '-u', url.username, password, url.pathname.slice(1), '-N', '-e', q);
  sql("CREATE TABLE t (v VARCHAR(20)); INSERT INTO t VALUES ('kept')");
  expect(sql('SELECT v FROM t')).toBe('kept');
  // The server restarts on its volume with the data.
  t.cli('restart', c);
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
  return added.addon.id;
}
