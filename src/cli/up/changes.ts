// The newest modification time of what `up` deploys: a folder changed while nothing watched it
// (between two `up`s) is deployed again at start.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadIgnore } from './ignore.ts';

const MAX_ENTRIES = 100_000;

export function newestChange(dir: string): number {
  const ignored = loadIgnore(dir);
  let newest = 0;
  let seen = 0;
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (++seen > MAX_ENTRIES || ignored(path, e.isDirectory())) continue;
      newest = Math.max(newest, lstatSync(join(dir, path)).mtimeMs);
      if (e.isDirectory()) walk(path);
    }
  };
  walk('');
  return newest;
}
