// One emulator per data dir (issue 35): a second `start` on a data dir in use exits 1 naming the
// running one (its pid and API URL) and leaves it serving; after a kill -9 the lock the dead process
// held is taken over by the next start; in one process, a second emulator on the dir is refused too.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { execCli } from '../../src/cli/exec.ts';
import { DataDirInUseError, dataDirHolder } from '../../src/db/data-dir-lock.ts';
import { createEmulator } from '../../src/emulator.ts';
import { testConfig } from '../harness.ts';
import { spawnEmulator, spawnStart } from './emulator-process.ts';

const _ROOT = resolve(import.meta.dirname, '../..');
const root = mkdtempSync(join(tmpdir(), 'emu-lock-'));

/** `start` on the data dir as a second process; resolves with its exit code and output. */
function secondStart(dataDir: string): Promise<{ code: number | null; out: string }> {
  const child = spawnStart(dataDir);
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  // Killed if it did start (the failure the test reports): it must not outlive the test.
  const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((ok) =>
    child.once('exit', (code) => {
      clearTimeout(t);
      ok({ code, out });
    }),
  );
}

describe('one emulator per data dir', () => {
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a second start exits 1 naming the running one; after kill -9 the next start takes the dir over', async () => {
    const dataDir = join(root, 'shared');
    mkdirSync(dataDir);
    const first = await spawnEmulator(dataDir);
    try {
      expect(dataDirHolder(dataDir)).toMatchObject({ pid: first.pid, api: first.api });
      const second = await secondStart(dataDir);
      expect(second.code, second.out).toBe(1);
      expect(second.out.trim()).toBe(
        `cannot start: the data dir ${dataDir} is in use by another emulator (pid ${first.pid}, API ${first.api}): ` +
          'stop it first, or choose another --data-dir',
      );
      // `exec` on it refuses too, naming it, rather than opening the data dir beside it.
      let execErr = '';
      const code = await execCli(['--data-dir', dataDir, '--', 'true'], {
        stderr: Object.assign(
          new PassThrough().on('data', (c) => (execErr += c)),
          { isTTY: false },
        ),
        env: {},
      });
      expect(code).toBe(1);
      expect(execErr).toContain(`is in use by another emulator (pid ${first.pid}, API ${first.api})`);
      // The first one still serves.
      expect((await first.call('GET', '/v1/apps')).status).toBe(200);

      await first.kill9();
      // The kernel dropped the dead process's lock: nothing holds the dir, though its file names it.
      expect(dataDirHolder(dataDir)).toBeNull();
      const third = await spawnEmulator(dataDir);
      try {
        expect(dataDirHolder(dataDir)).toMatchObject({ pid: third.pid, api: third.api });
        expect((await third.call('GET', '/v1/apps')).status).toBe(200);
      } finally {
        await third.stop();
      }
      expect(dataDirHolder(dataDir)).toBeNull();
    } finally {
      await first.stop();
    }
  }, 120_000);

  it('in one process, a second emulator on the dir is refused until the first stops', async () => {
    const dataDir = join(root, 'in-process');
    const config = testConfig({ inMemory: false, dataDir, port: 0, routerPort: 0, sshPort: 0 });
    const first = createEmulator(config);
    await first.start();
    try {
      expect(() => createEmulator(config)).toThrow(DataDirInUseError);
      expect(() => createEmulator(config)).toThrow(`(pid ${process.pid}, API ${first.urls.api})`);
    } finally {
      await first.stop();
    }
    const again = createEmulator(config);
    await again.stop();
  }, 60_000);
});
