import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FREE_PORT_FLAGS } from '../support/free-port.ts';

// The emulator as a user starts it: one process, one command.
const ROOT = resolve(import.meta.dirname, '../..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');
// Node itself runs the sources (tsx as a loader), so a signal reaches the emulator directly: the tsx
// command relays signals and kills a child that is slow to acknowledge one, as it is on a loaded machine.
const NODE_TSX = [process.execPath, '--import', pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href];

function startProcess(args: string[], cwd: string, entry: string[] = [...NODE_TSX, join(ROOT, 'src/main.ts')]) {
  const child = spawn(entry[0], [...entry.slice(1), ...args], {
    cwd,
    env: { ...process.env, EMULATOR_CONFIG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const ready = new Promise<string>((ok, fail) => {
    const t = setInterval(() => {
      if (/API token\s+\S+/.test(out) && out.includes('Try:')) {
        clearInterval(t);
        ok(out);
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(t);
      fail(new Error(`exited ${code}: ${out}`));
    });
  });
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  return { child, ready, exited, output: () => out };
}

describe('the emulator process', () => {
  it('starts, prints its URLs and a working API token, and stops cleanly on SIGTERM', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'emu-cli-'));
    try {
      const p = startProcess(['start', ...FREE_PORT_FLAGS, '--data-dir', 'state', '--log-level', 'warn'], cwd);
      const banner = await p.ready;
      const api = /API, auth and logs\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(banner)![1];
      expect(banner).toMatch(/Router\s+http:\/\/<app>\.localhost:\d+/);
      expect(banner).toMatch(/Git \(SSH\)\s+ssh:\/\/git@127\.0\.0\.1:\d+\/<app>\.git/);
      expect(banner).toContain(join(cwd, 'state', 'emulator.sqlite'));
      const token = /API token\s+(\S+)/.exec(banner)![1];
      const ex = await fetch(`${api}/v1/tokens/exchange`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`:${token}`).toString('base64')}` },
      });
      expect(ex.status).toBe(200);
      const bearer = ((await ex.json()) as { token: string }).token;
      const created = await fetch(`${api}/v1/apps`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ app: { name: 'cli-made-app' } }),
      });
      expect(created.status).toBe(201);
      expect((await fetch(`${api}/_emulator/health`)).status).toBe(200);
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      expect(p.output()).toContain('SIGTERM: stopping');
      expect(existsSync(join(cwd, 'state', 'emulator.sqlite'))).toBe(true);

      // State survives: a second start on the same data dir still has the app (and a fresh token).
      const q = startProcess([...FREE_PORT_FLAGS, '--data-dir', 'state', '--log-level', 'warn'], cwd);
      const banner2 = await q.ready;
      const api2 = /API, auth and logs\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(banner2)![1];
      const token2 = /API token\s+(\S+)/.exec(banner2)![1];
      const show = await fetch(`${api2}/v1/apps/cli-made-app`, {
        headers: { authorization: `Basic ${Buffer.from(`:${token2}`).toString('base64')}` },
      });
      expect(show.status).toBe(200);
      // The previous start's printed token was replaced.
      const old = await fetch(`${api2}/v1/apps`, {
        headers: { authorization: `Basic ${Buffer.from(`:${token}`).toString('base64')}` },
      });
      expect(old.status).toBe(401);
      q.child.kill('SIGINT');
      expect(await q.exited).toBe(0);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 60_000);

  it('`npm start` runs an esbuild bundle of the same code, which starts and answers', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'emu-bundle-'));
    try {
      const built = spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { encoding: 'utf8' });
      expect(built.status).toBe(0);
      expect(existsSync(join(ROOT, 'dist/main.mjs'))).toBe(true);
      expect(existsSync(join(ROOT, 'dist/migrations/001_init.sql'))).toBe(true);
      const p = startProcess(['start', ...FREE_PORT_FLAGS, '--in-memory', '--log-level', 'warn'], cwd, [
        process.execPath,
        join(ROOT, 'dist/main.mjs'),
      ]);
      const banner = await p.ready;
      const api = /API, auth and logs\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(banner)![1];
      const token = /API token\s+(\S+)/.exec(banner)![1];
      const health = await fetch(`${api}/_emulator/health`);
      expect(health.status).toBe(200);
      expect(
        ((await health.json()) as { subsystems: { database: { status: string } } }).subsystems.database.status,
      ).toBe('ok');
      expect(
        (
          await fetch(`${api}/v1/apps`, {
            headers: { authorization: `Basic ${Buffer.from(`:${token}`).toString('base64')}` },
          })
        ).status,
      ).toBe(200);
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 60_000);

  it('exits non-zero with every config problem in plain words', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'emu-cli-bad-'));
    try {
      writeFileSync(join(cwd, 'emulator.config.json'), JSON.stringify({ port: 'x', users: [], typo: true }));
      const r = spawnSync(TSX, [join(ROOT, 'src/main.ts'), '--in-memory'], {
        cwd,
        encoding: 'utf8',
        env: { ...process.env, EMULATOR_CONFIG: '' },
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('invalid configuration');
      expect(r.stderr).toMatch(/emulator\.config\.json: port: /);
      expect(r.stderr).toMatch(/users: .*at least one user/);
      expect(r.stderr).toContain('unknown key(s) "typo"');
      const flag = spawnSync(TSX, [join(ROOT, 'src/main.ts'), '--port', 'abc'], { cwd, encoding: 'utf8' });
      expect(flag.status).toBe(1);
      expect(flag.stderr).toContain('flag --port: expected a whole number');
      const unknown = spawnSync(TSX, [join(ROOT, 'src/main.ts'), '--nope'], { cwd, encoding: 'utf8' });
      expect(unknown.status).toBe(2);
      expect(unknown.stderr).toContain('Usage:');
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 30_000);
});
