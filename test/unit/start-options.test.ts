import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startNodeOptions } from '../../bench/lib/start-options.ts';

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
    const options = startNodeOptions(ROOT);
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
      expect(startNodeOptions(dir)).toEqual([]);
      write('node scripts/build.mjs && node --max-semi-space-size=2 --no-opt dist/main.mjs start');
      expect(startNodeOptions(dir)).toEqual(['--max-semi-space-size=2', '--no-opt']);
      write('tsx src/main.ts start');
      expect(() => startNodeOptions(dir)).toThrow(/does not run/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
