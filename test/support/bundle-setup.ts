import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

// vitest.config.ts's second global setup: the bundle the process tests run (test/support/emulator-command.ts), built by
// scripts/build.mjs, which does nothing when no source is newer than dist/ (0.2 s). Built here, once, rather than by
// each file: two builds at once in one checkout could each sweep the other's half-written files.
const ROOT = resolve(import.meta.dirname, '../..');

export default async function setup(): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`the bundle did not build (node scripts/build.mjs): ${e.stderr || e.message}`);
  }
}
