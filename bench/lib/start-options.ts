import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What `npm start` gives node: environment variables set before it, and its options before the bundle. */
export interface StartCommand {
  env: Record<string, string>;
  nodeOptions: string[];
}

/**
 * The environment and node options of `npm start` (`[VAR=value …] node <options> dist/main.mjs start` in the tree's
 * package.json), so that a benchmark starting the bundle itself measures what `npm start` runs. A tree whose start
 * script gives none (an older checkout measured with --emulator-dir) gets none.
 */
export function startCommand(emulatorDir: string): StartCommand {
  const pkg = JSON.parse(readFileSync(join(emulatorDir, 'package.json'), 'utf8')) as { scripts?: { start?: string } };
  const start = pkg.scripts?.start ?? '';
  const m = /(?:^|&&\s*)((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)node\s+((?:--\S+\s+)*)dist\/main\.mjs\s+start\b/.exec(
    start,
  );
  if (!m) throw new Error(`package.json's start script does not run \`node … dist/main.mjs start\`: ${start}`);
  const words = (s: string) => s.split(/\s+/).filter(Boolean);
  const env = Object.fromEntries(words(m[1]).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]));
  return { env, nodeOptions: words(m[2]) };
}
