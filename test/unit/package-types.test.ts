import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// index.d.ts is written by hand; this keeps it equal to src/index.ts's types (test/types/index-dts.check.ts).
const ROOT = resolve(import.meta.dirname, '../..');
const TSC = join(ROOT, 'node_modules/.bin/tsc');

function typecheck(file: string) {
  const dir = mkdtempSync(join(tmpdir(), 'emu-types-'));
  try {
    const base = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8'));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { ...base.compilerOptions, typeRoots: [join(ROOT, 'node_modules/@types')] },
        files: [file],
      }),
    );
    return spawnSync(TSC, ['-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', cwd: ROOT });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('index.d.ts', () => {
  it('declares the same programmatic API as src/index.ts', () => {
    const r = typecheck(join(ROOT, 'test/types/index-dts.check.ts'));
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('the check fails when the two differ', () => {
    const dir = mkdtempSync(join(ROOT, 'test/types/.tmp-'));
    try {
      const drifted = join(dir, 'index.d.ts');
      writeFileSync(
        drifted,
        readFileSync(join(ROOT, 'index.d.ts'), 'utf8').replace('routerPort?: number;', 'routerPort?: string;'),
      );
      const check = join(dir, 'check.ts');
      writeFileSync(
        check,
        readFileSync(join(ROOT, 'test/types/index-dts.check.ts'), 'utf8')
          .replace("'../../index.js'", "'./index.js'")
          .replace("'../../src/index.ts'", "'../../../src/index.ts'"),
      );
      const r = typecheck(check);
      expect(r.status).not.toBe(0);
      expect(r.stdout).toContain("Type 'true' is not assignable to type 'false'");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
