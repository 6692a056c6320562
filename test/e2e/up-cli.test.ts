import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dataDirHolder } from '../../src/db/data-dir-lock.ts';
import { Database } from '../../src/db/database.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { spawnEmulator } from '../reliability/emulator-process.ts';
import { routerGet } from '../support/apps.ts';
import { spawnCaptured } from '../support/captured-process.ts';
import { instancesUnder } from '../support/data-dirs.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';
import { emulatorCommand } from '../support/emulator-command.ts';
import { FREE_PORT_FLAGS, freePort } from '../support/free-port.ts';

// `scalingo-emulator up` and `down` as processes: each bad input is one line on stderr and exit 1;
// Ctrl-C stops the app's containers and exits 0; --detach leaves them running until `down`.
const ROOT = resolve(import.meta.dirname, '../..');
const root = mkdtempSync(join(tmpdir(), 'emu-up-cli-'));

function run(args: string[], opts: { env?: Record<string, string> } = {}) {
  return spawnCaptured(...emulatorCommand(args), {
    cwd: root,
    // The user's state directory (where `up` notes each folder's data dir for `down`) is the test's own.
    env: { ...process.env, EMULATOR_CONFIG: '', NO_COLOR: '1', XDG_STATE_HOME: join(root, 'state'), ...opts.env },
  });
}

function project(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  return dir;
}

const PORTS = [...FREE_PORT_FLAGS, '--in-memory'];
const WEB = { Procfile: 'web: echo "web up on $PORT"; exec httpd -f -p $PORT -h /app\n', 'index.html': 'hi\n' };

async function badInput(args: string[], env?: Record<string, string>): Promise<string> {
  const p = run(args, { env });
  const code = await p.exited;
  expect(code, p.stderr()).toBe(1);
  const lines = p.stderr().trim().split('\n');
  expect(lines, p.stderr()).toHaveLength(1);
  expect(p.stderr()).not.toMatch(/\n\s+at /);
  return lines[0];
}

describe('scalingo-emulator up: bad input gets one clear line and exit 1', () => {
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a folder that is not an app', async () => {
    const dir = project('empty-folder', { 'README.md': '# nothing to run\n' });
    expect(await badInput(['up', dir, ...PORTS])).toMatch(
      /^up: .*empty-folder is not an app: no Procfile, Dockerfile, package\.json/,
    );
    expect(await badInput(['up', join(root, 'missing'), ...PORTS])).toMatch(/^up: .*missing: no such folder$/);
  });

  it('invalid JSON in scalingo.json, with the position', async () => {
    const dir = project('bad-json', { ...WEB, 'scalingo.json': '{\n  "env": {\n    "A": {"value": "1"},\n  }\n}\n' });
    expect(await badInput(['up', dir, ...PORTS])).toMatch(/^up: scalingo\.json: invalid JSON at line 4 column 3: /);
    const wrongType = project('bad-field', { ...WEB, 'scalingo.json': '{"formation": {"web": {"amount": "two"}}}' });
    expect(await badInput(['up', wrongType, ...PORTS])).toMatch(/^up: scalingo\.json: formation\.web\.amount /);
  });

  it('an unknown addon or plan', async () => {
    const addon = project('bad-addon', { ...WEB, 'scalingo.json': '{"addons": [{"plan": "cassandra:big"}]}' });
    expect(await badInput(['up', addon, ...PORTS])).toMatch(
      /^up: scalingo\.json: addons\.0: unknown addon "cassandra" \(known: postgresql, mysql, redis/,
    );
    const plan = project('bad-plan', { ...WEB, 'scalingo.json': '{"addons": ["postgresql:postgresql-huge"]}' });
    expect(await badInput(['up', plan, ...PORTS])).toMatch(
      /^up: scalingo\.json: addons\.0: unknown plan "postgresql-huge" of postgresql \(plans: postgresql-sandbox/,
    );
  });

  it('a missing required env var (and its description)', async () => {
    const dir = project('needs-key', {
      ...WEB,
      'scalingo.json': '{"env": {"STRIPE_KEY": {"required": true, "description": "the Stripe API key"}}}',
    });
    expect(await badInput(['up', dir, ...PORTS])).toMatch(
      /^up: scalingo\.json: env STRIPE_KEY is required \(the Stripe API key\): set it in the shell/,
    );
  });

  it('a port in use by another program', async () => {
    const server: Server = createServer((s) => s.destroy());
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
    const port = (server.address() as { port: number }).port;
    try {
      const dir = project('port-taken', WEB);
      expect(
        await badInput(['up', dir, '--port', String(port), '--router-port', '0', '--ssh-port', '0', '--in-memory']),
      ).toBe(`up: port ${port} is in use by another program: choose another --port / --router-port / --ssh-port`);
    } finally {
      server.close();
    }
  });

  it('more than 100000 files: one line, exit 1, no stack trace, no archive left in TMPDIR', async () => {
    const dir = project('too-many-files', WEB);
    mkdirSync(join(dir, 'out'));
    // Empty files: inodes only.
    for (let i = 0; i <= 100_000; i++) writeFileSync(join(dir, 'out', `f${i}`), '');
    const tmp = join(root, 'tmp-too-many');
    mkdirSync(tmp);
    expect(await badInput(['up', dir, ...PORTS, '--no-watch'], { TMPDIR: tmp })).toBe(
      `up: ${dir}: more than 100000 files to deploy (is a build output missing from .gitignore?)`,
    );
    expect(readdirSync(tmp).filter((f) => f.startsWith('scalingo-up-'))).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  }, 180_000);

  it('bad usage is exit 2 with the usage', async () => {
    const p = run(['up', 'a', 'b']);
    expect(await p.exited).toBe(2);
    expect(p.stderr()).toContain('Usage: scalingo-emulator up [DIR]');
  });
});

describe('scalingo-emulator up as a process (real Docker)', () => {
  // Each test removes what it made: in memory, the emulator `up` started removes its apps' containers and images when it stops.
  const leftVolumes: string[] = [];
  const leftInstances: string[] = [];
  const detachedDataDirs: string[] = [];
  afterAll(async () => {
    // A background emulator a failed test left: stopped (its pid holds the data dir) before its containers go.
    for (const d of detachedDataDirs) {
      const pid = dataDirHolder(d)?.pid;
      if (pid) {
        process.kill(pid, 'SIGKILL');
        await eventually(() => dataDirHolder(d) === null, { timeoutMs: 10_000, what: `${d} released` });
      }
    }
    // Every data dir a test used (`--data-dir`, or `.emulator-data` in a project): an `up` on one keeps its apps' images.
    for (const instance of new Set([...leftInstances, ...instancesUnder(root)])) removeInstance(instance);
    for (const name of ['ctrl-c-app', 'detached-app', 'stopped-app', 'upd-custom', 'reuse-app', 'restart-app'])
      for (const c of dockerPs([`${LABELS.appName}=${name}`], true)) docker('rm', '-f', c.id);
    // What a failed `down --volumes` test would leave: the addon server and its volume (named after it).
    for (const v of leftVolumes) {
      for (const c of dockerPs([`${LABELS.addonId}=${v}`], true)) {
        docker('rm', '-f', c.id);
        spawnSync('docker', ['volume', 'rm', c.name]);
      }
    }
  });

  it('Ctrl-C stops the app and the emulator and exits 0', async () => {
    const dir = project('ctrl-c-app', WEB);
    cpSync(join(ROOT, 'fixtures/apps/busybox-web/index.html'), join(dir, 'index.html'));
    const tmp = join(root, 'tmp-ctrl-c');
    mkdirSync(tmp);
    const p = run(['up', dir, ...PORTS], { env: { TMPDIR: tmp } });
    await eventually(() => /Ctrl-C stops the app/.test(p.stdout()) || p.child.exitCode !== null, {
      timeoutMs: 120_000,
      what: `up ready: ${p.stdout()}${p.stderr()}`,
    });
    expect(p.child.exitCode, p.stderr()).toBeNull();
    await eventually(() => /^web-1\s+\| web up on 5000$/m.test(p.stdout()), {
      timeoutMs: 30_000,
      what: 'the web-1 line',
    });
    const running = dockerPs([`${LABELS.appName}=ctrl-c-app`]);
    expect(running.map((c) => c.state)).toEqual(['running']);
    p.child.kill('SIGINT');
    expect(await p.exited).toBe(0);
    expect(p.stdout()).toContain('SIGINT: stopping');
    expect(dockerPs([`${LABELS.appName}=ctrl-c-app`], true)).toEqual([]);
    // The deployed archive's temporary directory went with its upload.
    expect(readdirSync(tmp).filter((f) => f.startsWith('scalingo-up-'))).toEqual([]);
  }, 300_000);

  it('--detach leaves the app running; down stops it, down --volumes deletes it', async () => {
    const dir = project('detached-app', WEB);
    const dataDir = join(root, 'detached-data');
    // Free ports picked now (a user's `npm start` may hold the defaults): `down` finds the emulator on them.
    const [api, router, ssh] = [await freePort(), await freePort(), await freePort()];
    const ports = ['--port', `${api}`, '--router-port', `${router}`, '--ssh-port', `${ssh}`, '--data-dir', dataDir];
    const p = run(['up', dir, '--detach', ...ports]);
    try {
      expect(await p.exited, p.stderr()).toBe(0);
      expect(p.stdout()).toContain(`Detached: http://detached-app.localhost:${router} keeps running`);
      expect(dockerPs([`${LABELS.appName}=detached-app`]).map((c) => c.state)).toEqual(['running']);
      expect((await routerGet(router, 'detached-app', '/index.html')).body).toBe('hi\n');
    } finally {
      // Also when `up` failed: the emulator it left in the background is stopped (its pid file).
      const d = run(['down', dir, '--volumes', ...ports]);
      const code = await d.exited;
      if (p.child.exitCode === 0) {
        expect(code, d.stderr()).toBe(0);
        expect(d.stdout()).toContain('Deleted detached-app');
        expect(d.stdout()).toMatch(/Stopped the emulator \(pid \d+\)/);
      }
    }
    expect(dockerPs([`${LABELS.appName}=detached-app`], true)).toEqual([]);
    await expect(fetch(`http://127.0.0.1:${api}/_emulator/health`)).rejects.toThrow();
  }, 300_000);

  it('after a Ctrl-C (no emulator answering), down keeps the data and down --volumes removes the addon server and its volume', async () => {
    const dir = project('stopped-app', { ...WEB, 'scalingo.json': '{"addons": ["redis:redis-sandbox"]}' });
    const ports = [...FREE_PORT_FLAGS, '--data-dir', join(root, 'stopped-data')];
    const p = run(['up', dir, ...ports]);
    await eventually(() => /Ctrl-C stops the app/.test(p.stdout()) || p.child.exitCode !== null, {
      timeoutMs: 240_000,
      what: `up ready: ${p.stdout()}${p.stderr()}`,
    });
    expect(p.child.exitCode, p.stderr()).toBeNull();
    // The addon's id, asked of the emulator `up` started, with the token and URL it printed.
    const apiUrl = /export SCALINGO_API_URL=(\S+)/.exec(p.stdout())?.[1];
    const token = /--api-token (\S+)/.exec(p.stdout())?.[1];
    const res = await fetch(`${apiUrl}/v1/apps/stopped-app/addons`, {
      headers: { authorization: `Basic ${Buffer.from(`:${token}`).toString('base64')}` },
    });
    const addonId: string = (await res.json()).addons[0].id;
    leftVolumes.push(addonId);
    const server = dockerPs([`${LABELS.addonId}=${addonId}`], true)[0];
    expect(server.state).toBe('running');
    p.child.kill('SIGINT');
    expect(await p.exited).toBe(0);
    expect(dockerPs([`${LABELS.addonId}=${addonId}`], true).map((c) => c.state)).toEqual(['exited']);
    docker('volume', 'inspect', server.name);

    const stop = run(['down', dir, ...ports]);
    expect(await stop.exited, stop.stderr()).toBe(0);
    expect(stop.stdout()).toContain("Stopped stopped-app's containers and addon servers (no emulator was running");
    expect(dockerPs([`${LABELS.appName}=stopped-app`])).toEqual([]);
    expect(dockerPs([`${LABELS.addonId}=${addonId}`]).filter((c) => c.state === 'running')).toEqual([]);
    docker('volume', 'inspect', server.name);

    const wipe = run(['down', dir, '--volumes', ...ports]);
    expect(await wipe.exited, wipe.stderr()).toBe(0);
    expect(wipe.stdout()).toContain('Deleted stopped-app, its addons and their data');
    expect(dockerPs([`${LABELS.addonId}=${addonId}`], true)).toEqual([]);
    expect(() => docker('volume', 'inspect', server.name)).toThrow(/no such volume/i);
    expect(dockerPs([`${LABELS.appName}=stopped-app`], true)).toEqual([]);
  }, 420_000);

  it('up --detach with another --app and free ports: the printed down line, run as printed, leaves no process and no container', async () => {
    const dir = project('detach-verbatim', WEB);
    const dataDir = join(root, 'verbatim-data');
    detachedDataDirs.push(dataDir);
    const p = run([
      'up',
      'detach-verbatim',
      '--app',
      'upd-custom',
      '--detach',
      ...FREE_PORT_FLAGS,
      '--data-dir',
      dataDir,
    ]);
    expect(await p.exited, p.stderr()).toBe(0);
    const pid = Number(/Emulator started in the background \(pid (\d+)/.exec(p.stdout())?.[1]);
    expect(pid).toBeGreaterThan(0);
    const url = /Detached: (http:\/\/upd-custom\.localhost:(\d+)) keeps running/.exec(p.stdout());
    expect(url, p.stdout()).not.toBeNull();
    expect((await routerGet(Number(url![2]), 'upd-custom', '/index.html')).body).toBe('hi\n');
    // The line as printed: no --data-dir, --app or port; `up` recorded them.
    const line = /`scalingo-emulator (down[^`]*)` stops it/.exec(p.stdout())?.[1];
    expect(line).toBe('down detach-verbatim');
    const d = run(line!.split(' '));
    expect(await d.exited, d.stderr()).toBe(0);
    expect(d.stdout()).toContain(`Stopped the emulator (pid ${pid}) with upd-custom's containers and addon servers`);
    expect(() => process.kill(pid, 0)).toThrow();
    expect(dockerPs([`${LABELS.appName}=upd-custom`], true)).toEqual([]);
    expect(dir).toContain('detach-verbatim');
  }, 300_000);

  it('up on a data dir an emulator already runs uses that one (never a second beside it); Ctrl-C leaves it running', async () => {
    const dir = project('reuse-app', WEB);
    const dataDir = join(root, 'reuse-data');
    mkdirSync(dataDir);
    const running = await spawnEmulator(dataDir);
    try {
      const p = run([
        'up',
        dir,
        ...FREE_PORT_FLAGS,
        '--data-dir',
        dataDir,
        '--config',
        join(dataDir, 'emulator.config.json'),
      ]);
      await eventually(() => /Ctrl-C stops following/.test(p.stdout()) || p.child.exitCode !== null, {
        timeoutMs: 120_000,
        what: `up ready: ${p.stdout()}${p.stderr()}`,
      });
      expect(p.stdout()).toContain(`Using the emulator already running at ${running.api} (pid ${running.pid})`);
      expect((await running.call('GET', '/v1/apps/reuse-app')).status).toBe(200);
      p.child.kill('SIGINT');
      expect(await p.exited).toBe(0);
      expect((await running.call('GET', '/v1/apps')).status).toBe(200);
      expect(dockerPs([`${LABELS.appName}=reuse-app`]).map((c) => c.state)).toEqual(['running']);
      expect((await running.call('DELETE', '/v1/apps/reuse-app?current_name=reuse-app')).status).toBe(204);
    } finally {
      await running.stop();
    }
  }, 300_000);

  it('after a kill -9 of the emulator and every container stopped (an engine restart), up --detach returns once the app is served, with its addon data', async () => {
    const dir = project('restart-app', { ...WEB, 'scalingo.json': '{"addons": ["postgresql:postgresql-sandbox"]}' });
    const dataDir = join(root, 'restart-data');
    detachedDataDirs.push(dataDir);
    const first = run(['up', dir, '--detach', ...FREE_PORT_FLAGS, '--data-dir', dataDir]);
    expect(await first.exited, first.stderr()).toBe(0);
    const pid = Number(/Emulator started in the background \(pid (\d+)/.exec(first.stdout())?.[1]);
    const db = new Database(join(dataDir, 'emulator.sqlite'), { readonly: true });
    const instance = db.prepare("SELECT value FROM meta WHERE key = 'instance_id'").pluck().get() as string;
    db.close();
    leftInstances.push(instance);
    const pg = () => dockerPs([`${LABELS.owner}=${instance}`], true).find((c) => /postgresql/.test(c.name));
    await eventually(
      () =>
        docker(
          'exec',
          '-u',
          'postgres',
          pg()!.id,
          'psql',
          '-c',
          'CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$before the restart$$)',
        ),
      { timeoutMs: 60_000, what: 'a table written in the PostgreSQL server' },
    );
    // As a reboot leaves things: the emulator gone without stopping anything, then every container stopped by the engine.
    process.kill(pid, 'SIGKILL');
    await eventually(
      () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      { timeoutMs: 10_000, what: 'the emulator gone' },
    );
    for (const label of [LABELS.instance, LABELS.owner])
      for (const c of dockerPs([`${label}=${instance}`])) docker('stop', '-t', '1', c.id);

    const again = run(['up', dir, '--detach', ...FREE_PORT_FLAGS, '--data-dir', dataDir]);
    expect(await again.exited, again.stderr()).toBe(0);
    const served = /Detached: http:\/\/restart-app\.localhost:(\d+) keeps running/.exec(again.stdout());
    expect(served, again.stdout()).not.toBeNull();
    // Served when `up` says so: no wait here.
    expect(await routerGet(Number(served![1]), 'restart-app', '/index.html')).toMatchObject({
      status: 200,
      body: 'hi\n',
    });
    expect(docker('exec', '-u', 'postgres', pg()!.id, 'psql', '-tAc', 'SELECT v FROM kept').trim()).toBe(
      'before the restart',
    );
    const wipe = run(['down', dir, '--volumes']);
    expect(await wipe.exited, wipe.stderr()).toBe(0);
    expect(dockerPs([`${LABELS.owner}=${instance}`], true)).toEqual([]);
  }, 420_000);
});
