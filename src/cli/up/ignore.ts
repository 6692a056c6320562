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
 * `*` any run of characters except '/', `**` any run including '/', `?` one character. Iterative
 * with one back-tracking point per star kind, as fnmatch does: linear in practice, never exponential.
 */
export function wildcard(glob: string, text: string, slashes: boolean): boolean {
  let g = 0;
  let t = 0;
  let starG = -1;
  let starT = 0;
  let crossing = false;
  while (t < text.length) {
    if (g < glob.length && glob[g] === '*') {
      crossing = glob[g + 1] === '*';
      g += crossing ? 2 : 1;
      if (crossing && glob[g] === '/') g++;
      starG = g;
      starT = t;
    } else if (g < glob.length && (glob[g] === text[t] || (glob[g] === '?' && text[t] !== '/'))) {
      g++;
      t++;
    } else if (starG >= 0 && (text[starT] !== '/' || crossing || !slashes)) {
      starT++;
      t = starT;
      g = starG;
    } else {
      return false;
    }
  }
  while (g < glob.length && glob[g] === '*') g++;
  return g === glob.length;
}
