import { accessSync, constants, lstatSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { crc32Hex } from './checksum.ts';

/** Where the command's V8 code cache lives, or why it has none. */
export type CodeCacheDir = { dir: string } | { dir: null; reason: string };

/**
 * A code cache is code: whoever can write it decides what the emulator runs. So the directory must be one only the
 * user can write: beside the bundle (`dist/.v8-cache/`, as trusted as the bundle itself) when the user owns the bundle's
 * directory and may write there, else a directory of the user's own cache dir (`$XDG_CACHE_HOME` or `~/.cache`,
 * `scalingo-emulator/v8-cache/<bundle>`: one per installed bundle). `EMULATOR_CODE_CACHE_DIR` names another;
 * `EMULATOR_CODE_CACHE=off` turns the cache off. Whichever it is, it is created 0700 and used only if it is a real
 * directory (no symbolic link) owned by the user and writable by nobody else; otherwise the command compiles as usual.
 */
export function codeCacheDir(bundleDir: string, env: NodeJS.ProcessEnv = process.env): CodeCacheDir {
  if (/^(off|0|false|no)$/i.test(env.EMULATOR_CODE_CACHE ?? ''))
    return { dir: null, reason: 'EMULATOR_CODE_CACHE is off' };
  const dir =
    env.EMULATOR_CODE_CACHE_DIR ||
    (ownedAndWritable(bundleDir) ? join(bundleDir, '.v8-cache') : userCacheDir(bundleDir, env));
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    return { dir: null, reason: `cannot create ${dir}: ${(err as Error).message}` };
  }
  const problem = privateDirProblem(dir);
  return problem ? { dir: null, reason: `${dir} ${problem}` } : { dir };
}

/** Why `dir` may not hold code (null: it may): it must be a directory, not a link, the user's, writable only by the user. */
export function privateDirProblem(dir: string): string | null {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  if (!st) return 'does not exist';
  if (st.isSymbolicLink()) return 'is a symbolic link';
  if (!st.isDirectory()) return 'is not a directory';
  const uid = process.getuid?.();
  if (uid === undefined) return null; // Windows: no owners or modes to check; the user's own profile directories are private
  if (st.uid !== uid) return `belongs to uid ${st.uid}, not to this user (uid ${uid})`;
  if ((st.mode & 0o022) !== 0) return `is writable by others (mode ${(st.mode & 0o777).toString(8)})`;
  return null;
}

function ownedAndWritable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    const uid = process.getuid?.();
    return uid === undefined || lstatSync(dir).uid === uid;
  } catch {
    return false;
  }
}

function userCacheDir(bundleDir: string, env: NodeJS.ProcessEnv): string {
  const base =
    env.XDG_CACHE_HOME ||
    (process.platform === 'win32' && env.LOCALAPPDATA) ||
    (process.platform === 'darwin' ? join(homedir(), 'Library', 'Caches') : join(homedir(), '.cache'));
  return join(base, 'scalingo-emulator', 'v8-cache', crc32Hex(Buffer.from(bundleDir)));
}
