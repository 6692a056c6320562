import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// `npm test`'s pretest step (scripts/test-setup.sh): silent when everything is there; where a piece
// is missing and cannot be installed, one message saying what to do, and exit 1 at once.
const ROOT = resolve(import.meta.dirname, '../..');
const script = join(ROOT, 'scripts/test-setup.sh');

describe('scripts/test-setup.sh', () => {
  it('does nothing when the engine and every package of scripts/needs.sh are there', () => {
    const r = spawnSync('bash', [script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('stops with what to do when Docker is missing and this user cannot install it', () => {
    // A user that is not root, has no sudo, and whose engine does not answer (commands shadowed on PATH).
    const bin = mkdtempSync(join(tmpdir(), 'emu-setup-'));
    try {
      for (const [name, body] of Object.entries({ docker: 'exit 1', id: 'echo 1000', sudo: 'exit 1' })) {
        writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
        chmodSync(join(bin, name), 0o755);
      }
      const r = spawnSync('bash', [script], {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      });
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(
        'cannot run the tests: missing a running Docker engine, and this user can neither install packages nor start dockerd',
      );
      expect(r.stderr).toContain("What to do: run 'sudo bash scripts/docker-up.sh' once");
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("vitest's global setup stops the run at once with one message when no engine answers", () => {
    const r = spawnSync(
      join(ROOT, 'node_modules/.bin/vitest'),
      ['run', 'test/unit/durations.test.ts', '--reporter=default'],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, DOCKER_HOST: 'unix:///nonexistent/docker.sock', NO_COLOR: '1', FORCE_COLOR: '0' },
      },
    );
    expect(r.status).not.toBe(0);
    expect(r.stdout + r.stderr).toContain(
      "no Docker engine answers (connect ENOENT /nonexistent/docker.sock). The tests need one: run 'sudo bash scripts/docker-up.sh'",
    );
    expect(r.stdout + r.stderr).not.toMatch(/Tests\s+\d+ passed/);
  });

  it('is the pretest step of npm test, and .ci/run calls the README test command, from no emulator image', async () => {
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.pretest).toBe('bash scripts/test-setup.sh');
    expect(pkg.scripts.test).toBe('vitest run');
    const ci = spawnSync('grep', ['-c', '^SCALINGO_EMULATOR_TEST_FROM_SCRATCH=1 npm test ||', join(ROOT, '.ci/run')], {
      encoding: 'utf8',
    });
    expect(ci.stdout.trim()).toBe('1');
  });
});
