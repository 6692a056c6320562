import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';
import { archiveOf, FAST, routerGet, waitForDeployment } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';
import {
  checkNodeApp,
  checkPostgresAndRedis,
  type PostgresServer,
  type RedisServer,
} from '../support/stack-addon-checks.ts';

// Issue #15 end to end, observed in Docker and in the databases themselves: a Node app built by the
// buildpack-like build (npm packages from the registry), a real PostgreSQL and a real Redis beside
// it, data written with psql/redis-cli read back through the router (the checks of stack-addon-checks.ts, which the
// registry-path images pass too: image-sources.test.ts), one-offs on the same image,
// an emulator restart keeping the data, plan changes and removals.
const APP = 'node-pg';
// The first use of an image builds it from Debian's packages (minutes); later runs find it built.
const LONG = 900_000;
const addonContainer = (addonId: string) => dockerPs([`${LABELS.addonId}=${addonId}`], true)[0];
const psql = (container: string, db: string, sql: string) =>
  docker('exec', '-u', 'postgres', container, 'psql', '-d', db, '-tAc', sql);

describe('a Node app with PostgreSQL and Redis (real Docker, Debian-built images)', () => {
  let h: Harness;
  const dataDir = mkdtempSync(join(tmpdir(), 'emu-real-addons-'));
  const config = {
    inMemory: false,
    dataDir,
    intervals: { ...FAST, bootTimeoutMs: 60_000 },
    addons: { servers: true },
    logs: { drains: { mode: 'file' as const } },
  };
  let instance = '';
  let pg: PostgresServer;
  let redis: RedisServer;
  const onMachine = () => ({ h, cli: docker });
  let archive = '';

  beforeAll(async () => {
    h = await startEmulator(config);
    instance = h.emu.instanceId;
    archive = await archiveOf('node-pg-redis');
  });
  afterAll(async () => {
    await h.call('DELETE', `/v1/apps/${APP}?current_name=${APP}`).catch(() => undefined);
    await h.stop();
    removeInstance(instance);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(archive, { force: true });
  }, LONG);

  it(
    'provisions real PostgreSQL and Redis servers: containers with the plan memory, variables on the app, databases answering',
    async () => {
      expect((await h.call('POST', '/v1/apps', { body: { app: { name: APP } } })).status).toBe(201);
      ({ pg, redis } = await checkPostgresAndRedis(onMachine(), APP));
      // Reachable from the host at a port published on 127.0.0.1 only.
      expect(docker('port', pg.container, '5432')).toMatch(/^127\.0\.0\.1:\d+$/);
    },
    LONG,
  );

  it(
    'deploys the Node app with the buildpack-like build; it answers through the router with data written by psql and redis-cli',
    async () => {
      await checkNodeApp(onMachine(), APP, archive, { pg, redis });
    },
    LONG,
  );

  it(
    'a one-off runs on the same image against the same database (npm run migrate)',
    async () => {
      psql(pg.container, pg.db, 'DELETE FROM notes');
      expect(
        (await h.call('POST', `/v1/apps/${APP}/run`, { body: { command: 'npm run migrate', detached: true } })).status,
      ).toBe(200);
      await eventually(() => psql(pg.container, pg.db, 'SELECT text FROM notes') === 'written by the migration', {
        timeoutMs: 60_000,
        what: 'the migration to write its note',
      });
    },
    LONG,
  );

  it(
    'after an emulator restart the servers, their data and the app are still there',
    async () => {
      await h.stop();
      h = await startEmulator(config);
      expect(h.emu.instanceId).toBe(instance);
      expect(addonContainer(pg.id).state).toBe('running');
      const res = await eventually(
        async () => {
          const r = await routerGet(h.emu.urls.routerPort, APP);
          return r.status === 200 ? r : null;
        },
        { timeoutMs: 60_000, what: 'the app to answer after the restart' },
      );
      expect(JSON.parse(res.body)).toMatchObject({ notes: ['written by the migration'], hits: 43 });
    },
    LONG,
  );

  it(
    'a second deployment reuses the dependency layer: the new image is one COPY layer on the same dependency image',
    async () => {
      const first = (await h.call('GET', `/v1/apps/${APP}/deployments`)).body.deployments[0].id;
      await h.call('POST', `/v1/apps/${APP}/deployments`, { body: { deployment: { source_url: archive } } });
      const d = await waitForDeployment(
        h,
        APP,
        (x) => x.id !== first && ['success', 'build-error', 'crashed-error', 'timeout-error'].includes(x.status),
        600_000,
      );
      const output = (await h.call('GET', `/v1/apps/${APP}/deployments/${d.id}/output`)).text;
      expect(d.status, output).toBe('success');
      expect(output).toContain('Packages already in the build cache');
      expect(output).toContain('Reusing the dependency layer from the build cache');
      expect(output).not.toContain('-----> Installing dependencies');
      const appId = (await h.call('GET', `/v1/apps/${APP}`)).body.app.id as string;
      const depsImage = docker('image', 'inspect', '-f', '{{.Id}}', `scalingo-emulator/deps-${appId}:current`);
      // Above it: the COPY of the code and the labels, no command run (the builder's "#(nop)" steps).
      const history = docker(
        'history',
        '--no-trunc',
        '--format',
        '{{.ID}} {{.CreatedBy}}',
        `scalingo-emulator/app-${appId}:${d.id}`,
      ).split('\n');
      const above = history.slice(
        0,
        history.findIndex((l) => l.startsWith(`${depsImage} `)),
      );
      expect(above.length, history.join('\n')).toBeGreaterThan(0);
      expect(
        above.filter((l) => !l.includes('#(nop)')),
        history.join('\n'),
      ).toEqual([]);
      expect(above.filter((l) => /#\(nop\) COPY /.test(l))).toHaveLength(1);
    },
    LONG,
  );

  it(
    "the server's output reaches the addon's drain and its logs; a dump made now holds the data",
    async () => {
      const drain = await h.call('POST', `/v1/apps/${APP}/addons/${pg.id}/log_drains`, {
        body: { drain: { type: 'logtail', token: 'addon-drain' } },
      });
      expect(drain.status).toBe(201);
      psql(pg.container, pg.db, "DO $$ BEGIN RAISE LOG 'hello-addon-drain'; END $$");
      const dir = join(dataDir, 'drains');
      const files = () =>
        existsSync(dir)
          ? readdirSync(dir)
              .map((f) => readFileSync(join(dir, f), 'utf8'))
              .join('')
          : '';
      await eventually(() => files().includes('hello-addon-drain'), {
        timeoutMs: 30_000,
        what: 'the server line in the addon drain file',
      });
      const logs = await h.call('GET', `/v1/apps/${APP}/addons/${pg.id}/server/logs?n=1000`);
      expect(logs.text).toContain('hello-addon-drain');
      expect(logs.text).toContain('database system is ready to accept connections');
      const res = await fetch(`${h.api}/v1/apps/${APP}/addons/${pg.id}/server/dump`, {
        headers: { authorization: `Basic ${Buffer.from(`:${TOKENS.dev}`).toString('base64')}` },
      });
      expect(res.status).toBe(200);
      const sql = gunzipSync(Buffer.from(await res.arrayBuffer())).toString('utf8');
      expect(sql).toContain('CREATE TABLE public.notes');
      expect(sql).toContain('written by the migration');
      expect((await h.call('GET', `/v1/apps/${APP}/addons/${pg.id}/server/dump`, { as: 'other' })).status).toBe(404);
      // The database API serves backups, users, logs, settings and restores of a real server (addon-database-api.test.ts,
      // addon-database-restore.test.ts, addon-pitr.test.ts); what it does not serve (the database actions of the
      // dashboard's database view) gets a 400 pointing at these.
      const token = (await h.call('POST', `/v1/apps/${APP}/addons/${pg.id}/token`)).body.addon.token;
      const dbApi = await h.call('GET', `/api/databases/${pg.id}/tables`, { as: { bearer: token } });
      expect(dbApi.status).toBe(400);
      expect(dbApi.body.error).toContain('runs a real server');
      expect(dbApi.body.error).toContain('/server/dump');
      // A stand-in addon (MongoDB) runs no server: a plain 400 saying so.
      const mongo = (
        await h.call('POST', `/v1/apps/${APP}/addons`, {
          body: { addon: { addon_provider_id: 'scalingo-mongodb', plan_id: 'mongo-sandbox' } },
        })
      ).body.addon;
      expect(mongo.status).toBe('running');
      const standIn = await h.call('GET', `/v1/apps/${APP}/addons/${mongo.id}/server/logs`);
      expect(standIn.status).toBe(400);
      expect(standIn.body.error).toContain('stand-in');
    },
    LONG,
  );

  it(
    'addons-upgrade changes the memory limit of the running server; deleting an addon removes its server, volume and variables',
    async () => {
      const up = await h.call('PATCH', `/v1/apps/${APP}/addons/${pg.id}`, {
        body: { addon: { plan_id: 'postgresql-starter-512' } },
      });
      expect(up.status).toBe(200);
      await eventually(
        () => docker('inspect', '-f', '{{.HostConfig.Memory}}', pg.container) === String(512 * 1024 * 1024),
        { what: 'the new memory limit' },
      );
      const volume = docker('inspect', '-f', '{{range .Mounts}}{{.Name}}{{end}}', redis.container);
      expect(docker('volume', 'ls', '-q')).toContain(volume);
      expect((await h.call('DELETE', `/v1/apps/${APP}/addons/${redis.id}`)).status).toBe(204);
      await eventually(() => !addonContainer(redis.id) && !docker('volume', 'ls', '-q').split('\n').includes(volume), {
        timeoutMs: 30_000,
        what: 'the redis server and volume to go',
      });
      const names = (await h.call('GET', `/v1/apps/${APP}/variables`)).body.variables.map(
        (v: { name: string }) => v.name,
      );
      expect(names).not.toContain('REDIS_URL');
      expect(names).toContain('DATABASE_URL');
      expect((await h.call('DELETE', `/v1/apps/${APP}/addons/ad-00000000-0000-0000-0000-000000000000`)).status).toBe(
        404,
      );
    },
    LONG,
  );

  it(
    'deleting the app removes its addon servers, their volumes, its network and its dependency image',
    async () => {
      const appId = (await h.call('GET', `/v1/apps/${APP}`)).body.app.id as string;
      expect(docker('images', '-q', `scalingo-emulator/deps-${appId}`)).not.toBe('');
      const volume = docker('inspect', '-f', '{{range .Mounts}}{{.Name}}{{end}}', pg.container);
      expect((await h.call('DELETE', `/v1/apps/${APP}?current_name=${APP}`)).status).toBe(204);
      await eventually(() => !addonContainer(pg.id), { what: 'the postgresql server to go' });
      expect(docker('volume', 'ls', '-q').split('\n')).not.toContain(volume);
      expect(
        docker('network', 'ls', '--format', '{{.Name}}')
          .split('\n')
          .filter((n) => n.startsWith(`scalingo-emu-${instance}-`)),
      ).toEqual([]);
      await eventually(() => docker('images', '-q', `scalingo-emulator/deps-${appId}`) === '', {
        what: 'the dependency image to go',
      });
    },
    LONG,
  );
});
