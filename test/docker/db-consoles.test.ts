import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';
import { archiveOf, FAST, waitForAddon, waitForDeployment } from '../support/apps.ts';
import { docker, dockerPs, removeInstance } from '../support/docker-cli.ts';
import { connectTerminal, runAttached } from '../support/terminal.ts';

// Issue #22: the Go CLI's database consoles. The CLI reads the addon's URL from the app's variables
// (GET /v1/apps/:app/variables?aliases=false), then runs `dbclient-fetcher <kind> && <client> …` in an
// attached one-off (POST /v1/apps/:app/run, its words joined by spaces: go-scalingo Run) and copies the
// terminal both ways over the attach URL. These tests replay those requests and type into the real clients
// of the app's stack image; what they write is read back from the addon's own server with docker exec.
const LONG = 900_000;
const APP = 'consoles';
const BUSYBOX_APP = 'consoles-busybox';
const addonContainer = (addonId: string) => dockerPs([`${LABELS.addonId}=${addonId}`], true)[0].id;

/** The one-off command of each console, built as Scalingo/cli db/*_console.go (CLI 1.48) builds it. */
function consoleCommand(kind: 'pgsql' | 'mysql' | 'redis' | 'mongo', raw: string): string {
  const u = new URL(raw);
  const user = decodeURIComponent(u.username);
  const password = decodeURIComponent(u.password);
  const words: Record<typeof kind, string[]> = {
    pgsql: ['dbclient-fetcher', 'pgsql', '&&', 'psql', `'${raw}'`],
    mysql: [
      'dbclient-fetcher',
      'mysql',
      '&&',
      'mysql',
      '-h',
      u.hostname,
      '-P',
      u.port,
      `--password=${password}`,
      '-u',
      user,
      user,
    ],
    redis: ['dbclient-fetcher', 'redis', '&&', 'redis-cli', '-h', u.hostname, '-p', u.port, '-a', password],
    mongo: ['dbclient-fetcher', 'mongo', '&&', 'mongo', `'${raw}'`],
  };
  return words[kind].join(' ');
}

describe('database consoles of the Go CLI (real Docker, real servers)', () => {
  let h: Harness;
  let instance = '';
  const files: string[] = [];
  const addons: Record<string, string> = {};
  let vars: { name: string; value: string }[] = [];
  /** The URL the CLI picks: a variable whose name contains the prefix and whose value has the kind's scheme. */
  const urlOf = (prefix: string, schemes: string[]) => {
    const v = vars.find((x) => x.name.includes(prefix) && schemes.some((s) => x.value.startsWith(`${s}://`)));
    if (!v) throw new Error(`no ${prefix} variable among ${vars.map((x) => x.name).join(', ')}`);
    return v.value;
  };
  const waitExit = async (attachUrl: string) => (await fetch(`${attachUrl}/wait`)).json();
  /**
   * Attaches as the CLI does (apps/run.go): CONNECT, then at once PUT <attach_url> with its terminal's size (run_unix.go
   * updateTtySize: strings, basic auth with the token). The test's side also answers the cursor position queries
   * (ESC [6n) a terminal answers: line editors (redis-cli's linenoise) ask when the size is not known yet.
   */
  const attachLikeCli = async (command: string, app = APP) => {
    const { attachUrl } = await runAttached(h, app, command);
    const t = await connectTerminal(attachUrl);
    expect(t.status).toBe(200);
    t.socket.on('data', (b: Buffer) => {
      const queries = b.toString('latin1').split('\u001b[6n').length - 1;
      for (let i = 0; i < queries; i++) t.write('\u001b[1;120R');
    });
    const resize = await fetch(attachUrl, {
      method: 'PUT',
      headers: { authorization: `Basic ${Buffer.from(`:${TOKENS.dev}`).toString('base64')}` },
      body: JSON.stringify({ width: '120', height: '40' }),
    });
    expect(resize.status).toBe(200);
    return { attachUrl, t };
  };

  beforeAll(async () => {
    h = await startEmulator({ intervals: { ...FAST, bootTimeoutMs: 60_000 }, addons: { servers: true } });
    instance = h.emu.instanceId;
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: APP } } })).status).toBe(201);
    for (const kind of ['postgresql', 'mysql', 'redis']) {
      const add = await h.call('POST', `/v1/apps/${APP}/addons`, {
        body: { addon: { addon_provider_id: `scalingo-${kind}`, plan_id: `${kind}-sandbox` } },
      });
      expect(add.status, add.text).toBe(201);
      addons[kind] = add.body.addon.id;
    }
    for (const id of Object.values(addons)) await waitForAddon(h.call, APP, id, LONG);
    // A Python app (standard library only): its one-offs run on the Python stack image.
    const archive = await archiveOf('python-web');
    files.push(archive);
    const dep = await h.call('POST', `/v1/apps/${APP}/deployments`, { body: { deployment: { source_url: archive } } });
    expect(dep.status).toBe(201);
    const d = await waitForDeployment(h, APP, undefined, LONG);
    expect(d.status, (await h.call('GET', `/v1/apps/${APP}/deployments/${d.id}/output`)).text).toBe('success');
    const listed = await h.call('GET', `/v1/apps/${APP}/variables?aliases=false`);
    expect(listed.status).toBe(200);
    vars = listed.body.variables;
  }, LONG);
  afterAll(async () => {
    for (const app of [APP, BUSYBOX_APP])
      await h?.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
    await h?.stop();
    if (instance) removeInstance(instance);
    for (const f of files) rmSync(f, { recursive: true, force: true });
  }, LONG);

  it('pgsql-console: psql in the one-off answers SELECT 1; a row it inserts is in the addon server', async () => {
    const url = urlOf('SCALINGO_POSTGRESQL', ['postgres', 'postgis', 'postgresql']);
    const { attachUrl, t } = await attachLikeCli(consoleCommand('pgsql', url));
    await t.waitFor(/---> Database CLI installed:[\s\S]*psql \(PostgreSQL\) \d+/);
    await t.waitFor(/=> $/m);
    t.write('SELECT 1 AS console_check;\n');
    await t.waitFor(/console_check\s*\r?\n-+\s*\r?\n\s*1\s*\r?\n\(1 row\)/);
    t.write("CREATE TABLE console_notes (t text); INSERT INTO console_notes VALUES ('written in pgsql-console');\n");
    await t.waitFor(/INSERT 0 1/);
    // The one-off's environment has the addon's variables too, as the app's containers do (psql's \! runs a shell).
    t.write('\\! echo "env-url:$SCALINGO_POSTGRESQL_URL"\n');
    await t.waitFor(/env-url:postgres:\/\/\S+/);
    expect(t.output()).toContain(`env-url:${url}`);
    t.write('\\q\n');
    expect(await waitExit(attachUrl)).toEqual({ exit_code: 0 });
    const db = new URL(url).pathname.slice(1);
    const read = docker(
      'exec',
      '-u',
      'postgres',
      addonContainer(addons.postgresql),
      'psql',
      '-d',
      db,
      '-tAc',
      'SELECT t FROM console_notes',
    );
    expect(read).toBe('written in pgsql-console');
  });

  it('mysql-console: the MariaDB client answers SELECT 1; a row it inserts is in the addon server', async () => {
    const url = urlOf('SCALINGO_MYSQL', ['mysql', 'mysql2']);
    const { attachUrl, t } = await attachLikeCli(consoleCommand('mysql', url));
    await t.waitFor(/---> Database CLI installed:[\s\S]*mysql\s+Ver/);
    await t.waitFor(/\[[^\]]+\]> $/m);
    t.write('SELECT 1 AS console_check;\n');
    await t.waitFor(/\|\s*console_check\s*\|[\s\S]*\|\s*1\s*\|/);
    t.write("CREATE TABLE console_notes (t text); INSERT INTO console_notes VALUES ('written in mysql-console');\n");
    await t.waitFor(/Query OK, 1 row affected/);
    t.write('exit\n');
    expect(await waitExit(attachUrl)).toEqual({ exit_code: 0 });
    const u = new URL(url);
    const db = u.pathname.slice(1);
    const read = docker(
      'exec',
      addonContainer(addons.mysql),
      'mariadb',
      '-N',
      '-B',
      db,
      '-e',
      'SELECT t FROM console_notes',
    );
    expect(read).toBe('written in mysql-console');
  });

  it('redis-console: redis-cli answers PING; a key it sets is in the addon server', async () => {
    const url = urlOf('SCALINGO_REDIS', ['redis', 'rediss']);
    const { attachUrl, t } = await attachLikeCli(consoleCommand('redis', url));
    await t.waitFor(/---> Database CLI installed:[\s\S]*redis-cli \d+/);
    await t.waitFor(/:\d+> $/m);
    // The CLI's redisStdinCopy turns every \n typed into \r\n.
    t.write('PING\r\n');
    await t.waitFor(/PONG/);
    t.write('SET console-key "written in redis-console"\r\n');
    await t.waitFor(/\bOK\b/);
    t.write('exit\r\n');
    expect(await waitExit(attachUrl)).toEqual({ exit_code: 0 });
    const password = decodeURIComponent(new URL(url).password);
    const read = docker(
      'exec',
      addonContainer(addons.redis),
      'redis-cli',
      '-a',
      password,
      '--no-auth-warning',
      'GET',
      'console-key',
    );
    expect(read).toBe('written in redis-console');
  });

  it('mongo-console (no local server nor client): dbclient-fetcher says so in one line and the one-off exits 1', async () => {
    const { attachUrl, t } = await attachLikeCli(consoleCommand('mongo', 'mongodb://u:p@mongo.invalid:27017/db'));
    await t.waitFor(/the stacks of the emulator have no mongo client \(they have pgsql, mysql and redis\)/);
    expect(t.output()).not.toMatch(/mongo: not found/);
    expect(await waitExit(attachUrl)).toEqual({ exit_code: 1 });
  });

  it('an app on the busybox stack (a Procfile only) has no clients: the one-off says dbclient-fetcher is not found, exit 127', async () => {
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: BUSYBOX_APP } } })).status).toBe(201);
    const archive = await archiveOf('busybox-web');
    files.push(archive);
    const body = { deployment: { source_url: archive } };
    expect((await h.call('POST', `/v1/apps/${BUSYBOX_APP}/deployments`, { body })).status).toBe(201);
    expect((await waitForDeployment(h, BUSYBOX_APP, undefined, LONG)).status).toBe('success');
    const url = urlOf('SCALINGO_POSTGRESQL', ['postgres']);
    const { attachUrl, t } = await attachLikeCli(consoleCommand('pgsql', url), BUSYBOX_APP);
    await t.waitFor(/dbclient-fetcher: not found/);
    expect(await waitExit(attachUrl)).toEqual({ exit_code: 127 });
  });
});
