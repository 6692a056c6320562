// A snapshot file is checked (and migrated) in a child process, never in the emulator's own (issue 37): SQLite works
// synchronously and cannot be interrupted from JavaScript, so a file that makes it work long (a recursive view, a
// huge or damaged file) would stop the event loop, the health probe and even SIGTERM. The child has a deadline (it is
// killed at it) and bounded memory (V8's heap here, SQLite's in snapshot-check.ts); the emulator stays responsive.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type SnapshotCheck } from './snapshot-check.ts';

/** The deadline: a base, plus time in proportion to the file's size (a 512 MB file gets about two minutes). */
export const checkDeadlineMs = (bytes: number): number => 15_000 + Math.ceil(bytes / (5 * 1024 * 1024)) * 1000;

// From the sources (tsx, tests) the child is the TypeScript entry through tsx's loader; from the build, its own chunk.
const fromSources = import.meta.url.endsWith('.ts');
const childArgs = (): string[] =>
  fromSources
    ? [
        '--import',
        pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href,
        fileURLToPath(new URL('./snapshot-check-child.ts', import.meta.url)),
      ]
    : [fileURLToPath(new URL('./snapshot-check.cjs', import.meta.url))];

/** Checks and migrates the database file `file` in a child process; a check that cannot finish is a refusal. */
export function checkSnapshotFile(
  file: string,
  bytes: number,
  deadlineMs = checkDeadlineMs(bytes),
): Promise<SnapshotCheck> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--max-old-space-size=64', ...childArgs(), file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let out = '';
    let err = '';
    let late = false;
    const timer = setTimeout(() => ((late = true), child.kill('SIGKILL')), deadlineMs);
    // An emulator that exits meanwhile leaves no check running behind it.
    const killChild = () => child.kill('SIGKILL');
    process.once('exit', killChild);
    child.stdout.on('data', (c: Buffer) => void (out.length < 64 * 1024 && (out += c.toString())));
    child.stderr.on('data', (c: Buffer) => void (err.length < 64 * 1024 && (err += c.toString())));
    child.on('error', (e) => (clearTimeout(timer), process.off('exit', killChild), reject(e)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      process.off('exit', killChild);
      if (late) return resolve({ ok: false, problem: `could not be read within ${deadlineMs / 1000} s: refused` });
      try {
        if (code === 0) return resolve(JSON.parse(out) as SnapshotCheck);
      } catch {
        // An answer that is not one: reported below with what the child said.
      }
      const why = signal
        ? `was stopped by ${signal}`
        : /heap out of memory/i.test(err)
          ? 'ran out of memory'
          : `exited with ${code}`;
      resolve({ ok: false, problem: `could not be read: the check ${why}` });
    });
  });
}
