import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');

describe('npm run bench -- --baseline-dir', () => {
  it('refuses a directory that holds no emulator tree, before any section starts', () => {
    const empty = mkdtempSync(join(tmpdir(), 'bench-baseline-'));
    try {
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'pairs', '--baseline-dir', empty], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain('--baseline-dir: no src/main.ts in');
      expect(r.stderr).not.toContain('pairs: round');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('is listed in the usage', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--help'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/--baseline-dir <d>\s+also start this tree/);
  });
});
