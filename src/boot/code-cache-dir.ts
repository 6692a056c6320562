import { accessSync, constants, lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { crc32Hex } from './checksum.ts';

/** Where the command's V8 code cache lives, or why it has none. */
export type CodeCacheDir = { dir: string } | { dir: null; reason: string };

/**
 * A code cache is code: whoever can write it decides what the emulator runs. So the directory must be one only the
 * user can write: beside the bundle (`dist/.v8-cache/`, as trusted as the bundle itself) when the user owns the bundle's
 * directory and may write there, else a directory of the user's own cache dir (`$XDG_CACHE_HOME` or `~/.cache`,
 * `scalingo-emulator/v8-cache/<bundle>`: one per installed bundle). `EMULATOR_CODE_CACHE_DIR` names another;
 * `EMULATOR_CODE_CACHE=off` turns the cache off. Whichever it is, it is created 0700 and used only if it is a real
 * directory (no symbolic link) owned by the user and writable by nobody else, inside directories nobody else may swap it in
 * (`ancestorProblem`); otherwise the command compiles as usual.
 */
export function codeCacheDir(bundleDir: string, env: NodeJS.ProcessEnv = process.env): CodeCacheDir {
  if (/^(off|0|false|no)$/i.test(env.EMULATOR_CODE_CACHE ?? ''))
    return { dir: null, reason: 'EMULATOR_CODE_CACHE is off' };
  let dir = env.EMULATOR_CODE_CACHE_DIR || '';
  try {
    dir ||= ownedAndWritable(bundleDir) ? join(bundleDir, '.v8-cache') : userCacheDir(bundleDir, env);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    return { dir: null, reason: `cannot create ${dir || 'a cache directory'}: ${(err as Error).message}` };
  }
  const problem = privateDirProblem(dir) ?? ancestorProblem(dir);
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

/**
 * Why a directory above `dir` would let someone else swap it (null: none would): each must be root's or the user's,
 * and writable by nobody else unless its sticky bit keeps others from renaming what is not theirs (as /tmp's does).
 */
export function ancestorProblem(dir: string): string | null {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  let real: string;
  try {
    real = realpathSync(dir);
  } catch (err) {
    return `cannot be resolved: ${(err as Error).message}`;
  }
  for (let up = dirname(real); ; up = dirname(up)) {
    const st = lstatSync(up);
    if (st.uid !== 0 && st.uid !== uid) return `is inside ${up}, which belongs to uid ${st.uid}`;
    if ((st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0)
      return `is inside ${up}, which others may write (mode ${(st.mode & 0o777).toString(8)}, no sticky bit)`;
    if (up === dirname(up)) return null;
  }
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
