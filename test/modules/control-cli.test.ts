import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FREE_PORT_FLAGS } from '../support/free-port.ts';

// --export-on-exit and --import through separate emulator processes, as a user runs them:
// the state of one in-memory run is carried into the next one by a snapshot file.
const ROOT = resolve(import.meta.dirname, '../..');
// `node --import tsx` rather than the tsx CLI: the CLI relays SIGTERM and kills its child if the child does not
// acknowledge within 30 ms — on a loaded machine that cuts the stop (and the export) short.
const ENTRY = [
  '--import',
  pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href,
  join(ROOT, 'src/main.ts'),
];
const ADMIN = 'admin-token-for-cli-000000000000';

function start(args: string[], cwd: string) {
  const child = spawn(process.execPath, [...ENTRY, ...FREE_PORT_FLAGS, '--in-memory', '--log-level', 'warn', ...args], {
    cwd,
    env: { ...process.env, EMULATOR_CONFIG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  const ready = new Promise<{ api: string; token: string; banner: string }>((ok, fail) => {
    const t = setInterval(() => {
      if (out.includes('Try:')) {
        clearInterval(t);
        ok({
          api: /API, auth and logs\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1],
          token: /API token\s+(\S+)/.exec(out)![1],
          banner: out,
        });
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(t);
      fail(new Error(`exited ${code}: ${out}`));
    });
  });
  return { child, ready, exited, output: () => out };
}

const basic = (token: string) => ({
  authorization: `Basic ${Buffer.from(`:${token}`).toString('base64')}`,
  'content-type': 'application/json',
});

describe('--export-on-exit and --import', () => {
  it('the state of one run, written at stop, is where the next run starts from', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'emu-ctl-cli-'));
    try {
      const a = start(['--admin-token', ADMIN, '--export-on-exit', 'state.sqlite'], cwd);
      const first = await a.ready;
      expect(first.banner).toMatch(new RegExp(`Admin token\\s+${ADMIN}`));
      expect(
        (
          await fetch(`${first.api}/v1/apps`, {
            method: 'POST',
            headers: basic(first.token),
            body: JSON.stringify({ app: { name: 'carried-app' } }),
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await fetch(`${first.api}/v1/apps/carried-app/variables`, {
            method: 'POST',
            headers: basic(first.token),
            body: JSON.stringify({ variable: { name: 'CARRIED', value: 'yes' } }),
          })
        ).status,
      ).toBe(201);
      a.child.kill('SIGTERM');
      expect(await a.exited).toBe(0);
      expect(readFileSync(join(cwd, 'state.sqlite')).subarray(0, 15).toString()).toBe('SQLite format 3');

      const b = start(['--import', 'state.sqlite'], cwd);
      const second = await b.ready;
      try {
        expect(second.token).not.toBe(first.token);
        const vars = await fetch(`${second.api}/v1/apps/carried-app/variables`, { headers: basic(second.token) });
        expect(vars.status).toBe(200);
        expect(((await vars.json()) as { variables: { name: string; value: string }[] }).variables).toEqual([
          expect.objectContaining({ name: 'CARRIED', value: 'yes' }),
        ]);
        // A random admin token when none is given.
        const admin = /Admin token\s+(ad-\S+)/.exec(second.banner)![1];
        expect(
          (await fetch(`${second.api}/_emulator/snapshots`, { headers: { authorization: `Bearer ${admin}` } })).status,
        ).toBe(200);
      } finally {
        b.child.kill('SIGTERM');
        await b.exited;
      }
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('a missing or invalid snapshot file, or a short admin token, stops the start with a plain message', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'emu-ctl-cli-'));
    try {
      const run = (...args: string[]) =>
        spawnSync(process.execPath, [...ENTRY, ...FREE_PORT_FLAGS, '--in-memory', ...args], {
          cwd,
          encoding: 'utf8',
          env: { ...process.env, EMULATOR_CONFIG: '' },
        });
      const missing = run('--import', 'nope.sqlite');
      expect(missing.status).toBe(1);
      expect(missing.stderr).toMatch(/cannot read the snapshot to import .*nope\.sqlite/);
      writeFileSync(join(cwd, 'junk.sqlite'), 'not a database');
      const junk = run('--import', 'junk.sqlite');
      expect(junk.status).toBe(1);
      expect(junk.stderr).toMatch(/cannot import junk\.sqlite: is not an SQLite database file/);
      const short = run('--admin-token', 'short');
      expect(short.status).toBe(1);
      expect(short.stderr).toMatch(/adminToken: the admin token must be at least 16 characters/);
      expect(existsSync(join(cwd, '.emulator-data'))).toBe(false);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
