import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DATABASE_CLIENT_PACKAGES,
  DBCLIENT_FETCHER_PATH,
  dbclientFetcherInstall,
} from '../../src/runtime/dbclient-fetcher.ts';
import { findRecipe, IMAGE_RECIPES } from '../../src/runtime/image-recipes.ts';

// The stacks' dbclient-fetcher (issue #22): installed by every stack recipe, of every suite, and nowhere else;
// the script written by the install command is run here with the host's sh for the kinds that need no client
// (the clients themselves are driven in test/docker/db-consoles.test.ts, in the real images).
const root = mkdtempSync(join(tmpdir(), 'emu-dbclient-fetcher-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const script = join(root, 'dbclient-fetcher');
const [write, chmod] = dbclientFetcherInstall().map((c) => c.replaceAll(DBCLIENT_FETCHER_PATH, script));
const run = (...args: string[]) =>
  spawnSync('sh', [script, ...args], { encoding: 'utf8', cwd: root, env: { PATH: '/usr/bin:/bin' } });

describe('dbclient-fetcher of the stack images', () => {
  it('is installed, with the clients, by each stack recipe and its suite variants; not by the addon images', () => {
    const stacks = IMAGE_RECIPES.filter((r) => r.kind === 'stack');
    expect(stacks.map((r) => r.id)).toEqual(['node', 'python', 'ruby']);
    for (const r of [...stacks, findRecipe('python-trixie'), findRecipe('ruby-trixie')]) {
      expect(r?.packages).toEqual(expect.arrayContaining(DATABASE_CLIENT_PACKAGES));
      expect(r?.customize).toEqual(expect.arrayContaining(dbclientFetcherInstall()));
      expect(r?.tag).toMatch(r?.id === 'node' ? /:3$/ : /:2$/);
    }
    for (const r of IMAGE_RECIPES.filter((x) => x.kind === 'addon')) expect(r.customize).not.toContain(chmod);
  });

  it('the install command writes an executable script (shell quoting kept through printf)', () => {
    expect(spawnSync('sh', ['-c', `${write} && ${chmod}`]).status).toBe(0);
    expect(statSync(script).mode & 0o777).toBe(0o755);
    expect(spawnSync('sh', ['-n', script]).status).toBe(0);
  });

  it('a kind without a local client (the CLI passes mongo, influxdb): one line on stderr, exit 1', () => {
    for (const kind of ['mongo', 'influxdb', 'elasticsearch']) {
      const r = run(kind);
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `dbclient-fetcher: the stacks of the emulator have no ${kind} client (they have pgsql, mysql and redis)\n`,
      );
    }
  });

  it('no kind: a usage line, exit 2; a kind is never run as a command', () => {
    const none = run();
    expect(none.status).toBe(2);
    expect(none.stderr).toBe('usage: dbclient-fetcher <pgsql|mysql|redis> [version]\n');
    const tricky = run('$(touch pwned)');
    expect(tricky.status).toBe(1);
    expect(() => statSync(join(root, 'pwned'))).toThrow();
  });
});
