import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The options `npm start` gives node before the bundle (`node <options> dist/main.mjs start` in the tree's package.json),
 * so that a benchmark starting the bundle itself measures what `npm start` runs. A tree whose start script gives none
 * (an older checkout measured with --emulator-dir) gets none.
 */
export function startNodeOptions(emulatorDir: string): string[] {
  const pkg = JSON.parse(readFileSync(join(emulatorDir, 'package.json'), 'utf8')) as { scripts?: { start?: string } };
  const start = pkg.scripts?.start ?? '';
  const m = /(?:^|&&\s*)node\s+((?:--\S+\s+)*)dist\/main\.mjs\s+start\b/.exec(start);
  if (!m) throw new Error(`package.json's start script does not run \`node … dist/main.mjs start\`: ${start}`);
  return m[1].split(/\s+/).filter(Boolean);
}
