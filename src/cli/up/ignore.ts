// What `up` leaves out of the code it deploys and of the changes it watches: `.git`, `node_modules`
// and what the folder's top-level .gitignore names (the platform builds what git holds). Patterns are
// matched by a wildcard matcher (`*`, `?`, `**`) without regular expressions: the file is user input.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

// The emulator's default data dir is left out too: `up` run inside the project keeps its state there.
const ALWAYS = ['.git', 'node_modules', '.emulator-data'];
const MAX_PATTERNS = 1000;

interface Pattern {
  glob: string;
  /** Contains a slash: matched against the whole relative path, from the folder's root. */
  anchored: boolean;
  dirOnly: boolean;
}

/** A predicate on paths relative to the folder ('a/b.txt'); `isDir` when the path is a directory. */
export type IgnoreFn = (relPath: string, isDir: boolean) => boolean;

export function loadIgnore(dir: string): IgnoreFn {
  const file = join(dir, '.gitignore');
  const patterns: Pattern[] = [];
  if (existsSync(file) && statSync(file).isFile() && statSync(file).size < 1024 * 1024) {
    for (const raw of readFileSync(file, 'utf8').split(/\r?\n/).slice(0, MAX_PATTERNS)) {
      const line = raw.trim();
      // Negations (!keep) are not followed: the file is only left in.
      if (!line || line.startsWith('#') || line.startsWith('!')) continue;
      const dirOnly = line.endsWith('/');
      const body = line.replace(/^\/+/, '').replace(/\/+$/, '');
      if (body) patterns.push({ glob: body, anchored: line.replace(/\/+$/, '').includes('/'), dirOnly });
    }
  }
  return (relPath, isDir) => {
    const parts = relPath.split('/');
    if (parts.some((p) => ALWAYS.includes(p))) return true;
    for (const p of patterns) {
      if (p.anchored) {
        // A directory pattern also hides what is under it.
        for (let i = 1; i <= parts.length; i++) {
          const prefix = parts.slice(0, i).join('/');
          const prefixIsDir = i < parts.length || isDir;
          if ((!p.dirOnly || prefixIsDir) && wildcard(p.glob, prefix, true)) return true;
        }
      } else {
        for (let i = 0; i < parts.length; i++) {
          const segmentIsDir = i < parts.length - 1 || isDir;
          if ((!p.dirOnly || segmentIsDir) && wildcard(p.glob, parts[i], false)) return true;
        }
      }
    }
    return false;
  };
}

/**
 * `*` any run of characters (not '/' when `slashes`), `?` one character, and — on paths — a `**`
 * segment any number of directories. Within a segment, one back-tracking point as fnmatch does
 * (linear); across segments, `**` tries each depth (paths are a few segments deep, `**` at most 4).
 */
export function wildcard(glob: string, text: string, slashes: boolean): boolean {
  if (!slashes) return segmentMatch(glob, text);
  const g = glob.split('/');
  const t = text.split('/');
  if (g.filter((x) => x === '**').length > 4) return false;
  const match = (gi: number, ti: number): boolean => {
    if (gi === g.length) return ti === t.length;
    if (g[gi] === '**') {
      for (let k = ti; k <= t.length; k++) if (match(gi + 1, k)) return true;
      return false;
    }
    return ti < t.length && segmentMatch(g[gi], t[ti]) && match(gi + 1, ti + 1);
  };
  return match(0, 0);
}

function segmentMatch(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  let starG = -1;
  let starT = 0;
  while (t < text.length) {
    if (g < glob.length && glob[g] === '*') {
      while (glob[g] === '*') g++;
      starG = g;
      starT = t;
    } else if (g < glob.length && (glob[g] === text[t] || glob[g] === '?')) {
      g++;
      t++;
    } else if (starG >= 0) {
      t = ++starT;
      g = starG;
    } else {
      return false;
    }
  }
  while (g < glob.length && glob[g] === '*') g++;
  return g === glob.length;
}
