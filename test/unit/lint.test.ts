import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// `npm test` (so CI's .ci/run) fails on a lint error or on unformatted code through this file: Biome with
// biome.json, the same run as `npm run lint` (`biome check`: the linter and the formatter). The other tests
// prove the config still catches what it promises.
const ROOT = resolve(import.meta.dirname, '../..');
const BIOME = join(ROOT, 'node_modules/.bin/biome');

function biome(args: string[], cwd = ROOT): Promise<{ code: number | null; out: string }> {
  return new Promise((ok, fail) => {
    const child = spawn(BIOME, args, {
      cwd,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => ok({ code, out }));
  });
}

describe('biome check', () => {
  it('reports nothing in src/, test/, bench/ and scripts/', async () => {
    const r = await biome(['check', '--colors=off', '--max-diagnostics=30']);
    expect(r.out).toMatch(/Checked \d+ files/);
    expect(r.out).not.toMatch(/Found \d+ (error|warning)/);
    expect(r.code).toBe(0);
  }, 180_000);

  it('rejects a non-null assertion and an `as never` in src/', async () => {
    // The repository's config and plugin, on a probe file in a scratch copy (nothing written in the repo).
    const dir = mkdtempSync(join(tmpdir(), 'lint-probe-'));
    try {
      cpSync(join(ROOT, 'biome.json'), join(dir, 'biome.json'));
      cpSync(join(ROOT, 'lint'), join(dir, 'lint'), { recursive: true });
      mkdirSync(join(dir, 'src'));
      writeFileSync(
        join(dir, 'src/probe.ts'),
        'export const first = [1].find((x) => x > 0)!;\nexport const n: number = "x" as never;\n',
      );
      const r = await biome(['lint', '--colors=off'], dir);
      expect(r.out).toContain('lint/style/noNonNullAssertion');
      expect(r.out).toContain('`as never` hides a type mismatch');
      expect(r.code).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('rejects a raw c.req.param()/c.req.query() in a *.routes.ts file, not elsewhere', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lint-probe-'));
    try {
      cpSync(join(ROOT, 'biome.json'), join(dir, 'biome.json'));
      cpSync(join(ROOT, 'lint'), join(dir, 'lint'), { recursive: true });
      mkdirSync(join(dir, 'src'));
      const raw =
        'type C = { req: { param(k?: string): string; query(k?: string): string } };\n' +
        "export const read = (c: C) => [c.req.param('id'), c.req.query('page'), c.req.query()];\n";
      writeFileSync(join(dir, 'src/probe.routes.ts'), raw);
      writeFileSync(join(dir, 'src/probe-middleware.ts'), raw);
      const r = await biome(['lint', '--colors=off', '--max-diagnostics=50'], dir);
      const found = r.out.match(/read path parameters and query from the handler's input/g) ?? [];
      expect(found).toHaveLength(3);
      expect(r.out).toContain('probe.routes.ts');
      expect(r.out).not.toContain('probe-middleware.ts');
      expect(r.code).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('rejects code the formatter would change', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'format-probe-'));
    try {
      cpSync(join(ROOT, 'biome.json'), join(dir, 'biome.json'));
      cpSync(join(ROOT, 'lint'), join(dir, 'lint'), { recursive: true });
      mkdirSync(join(dir, 'src'));
      writeFileSync(join(dir, 'src/probe.ts'), 'export const answer   =  {a:1};\n');
      const r = await biome(['check', '--colors=off'], dir);
      expect(r.out).toMatch(/format/i);
      expect(r.code).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
