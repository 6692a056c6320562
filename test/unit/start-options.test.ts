import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureEmulatorBundle } from '../../bench/lib/bundle.ts';
import { spawnEmulator } from '../../bench/lib/processes.ts';
import { startCommand } from '../../bench/lib/start-options.ts';

const ROOT = join(import.meta.dirname, '../..');

/** The young generation's reserved size (both semi-spaces) of a node started with these options. */
function newSpaceBytes(options: string[]): number {
  const script =
    "console.log(require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size)";
  // Enough surviving allocation to make V8 grow the young generation up to its maximum, as a start does.
  const grow =
    'let keep = []; for (let i = 0; i < 300000; i++) { keep.push({ i, s: "x" + i }); if (keep.length > 60000) keep = keep.slice(30000); }';
  const r = spawnSync(process.execPath, [...options, '-e', `${grow}; ${script}`], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return Number(r.stdout.trim());
}

describe("npm start's node options", () => {
  it('cap the young generation at 1 MiB a semi-space, which node accepts and applies', () => {
    const options = startCommand(ROOT).nodeOptions;
    expect(options).toEqual(['--max-semi-space-size=1']);
    // Without the option, the same allocations grow it to 8 MiB a semi-space (V8's default maximum here).
    expect(newSpaceBytes(options)).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(newSpaceBytes([])).toBeGreaterThan(2 * 1024 * 1024);
  });

  it('are read from the start script of the tree measured, and none where it gives none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'start-options-'));
    try {
      const write = (start: string) => writeFileSync(join(dir, 'package.json'), JSON.stringify({ scripts: { start } }));
      write('node scripts/build.mjs && node dist/main.mjs start');
      expect(startCommand(dir)).toEqual({ env: {}, nodeOptions: [] });
      write('node scripts/build.mjs && node --max-semi-space-size=2 --no-opt dist/main.mjs start');
      expect(startCommand(dir)).toEqual({ env: {}, nodeOptions: ['--max-semi-space-size=2', '--no-opt'] });
      write('node scripts/build.mjs && A_B=1 MALLOC_ARENA_MAX=2 node --no-opt dist/main.mjs start');
      expect(startCommand(dir)).toEqual({ env: { A_B: '1', MALLOC_ARENA_MAX: '2' }, nodeOptions: ['--no-opt'] });
      write('tsx src/main.ts start');
      expect(() => startCommand(dir)).toThrow(/does not run/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("set glibc's trim threshold, and the benchmarks start the bundle with it as npm start does", async () => {
    expect(startCommand(ROOT).env).toEqual({ MALLOC_TRIM_THRESHOLD_: '131072' });
    ensureEmulatorBundle(ROOT);
    const child = await spawnEmulator({ emulatorDir: ROOT, dataDir: null, bundled: true });
    try {
      const pid = child.proc.pid;
      expect(pid).toBeTypeOf('number');
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      expect(environ).toContain('MALLOC_TRIM_THRESHOLD_=131072');
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      expect(cmdline.slice(1, 3)).toEqual(['--max-semi-space-size=1', join(ROOT, 'dist/main.mjs')]);
    } finally {
      await child.stop();
    }
  });
});
