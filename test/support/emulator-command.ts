import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

// The `scalingo-emulator` command as a user runs it: node on the bundle (dist/main.mjs, the package's bin). The tests that
// start it as a process many times (`up` and `down`: test/e2e/up-cli.test.ts, up-stop.test.ts) run it so: each
// `node --import tsx src/main.ts` compiled the sources again: 4.2–6.5 s to `--help` at load 20 against 0.4–1.7 s for the bundle
// (BENCHMARKS.md, "the test suite's time"). The global setup (test/support/bundle-setup.ts) builds the bundle when a
// source is newer, once for the run, before any file starts.

const ROOT = resolve(import.meta.dirname, '../..');
export const BUNDLED_COMMAND = join(ROOT, 'dist/main.mjs');

/** The program and its arguments to run the emulator's command with `args`. */
export function emulatorCommand(args: string[]): [string, string[]] {
  if (!existsSync(BUNDLED_COMMAND))
    throw new Error(
      `${BUNDLED_COMMAND} is missing: run the file through vitest.config.ts (its global setup builds it) or run npm run build first`,
    );
  return [process.execPath, [BUNDLED_COMMAND, ...args]];
}
