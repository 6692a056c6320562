import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * A directory of the user's cache for the emulator (`$XDG_CACHE_HOME` or `~/.cache`, then
 * `scalingo-emulator/<parts>`): what the host downloads once and every data dir shares (Debian
 * packages, packages of the npm registry).
 */
export function userCacheDir(...parts: string[]): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'scalingo-emulator', ...parts);
}
