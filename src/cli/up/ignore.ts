// What `up` leaves out of the code it deploys and of the changes it watches: `.git`, `node_modules`
// and what the folder's top-level .gitignore names (the platform builds what git holds), read with git's
// rules by the `ignore` package (negations, anchors, directories, `**`). Its patterns compile to
// expressions without nested repetition; the file is bounded in size, lines and line length.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ignore from 'ignore';

// The emulator's default data dir is left out too: `up` run inside the project keeps its state there.
const ALWAYS = ['.git', 'node_modules', '.emulator-data'];
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_PATTERNS = 1000;
const MAX_PATTERN_CHARS = 1024;

/** A predicate on paths relative to the folder ('a/b.txt'); `isDir` when the path is a directory. */
export type IgnoreFn = (relPath: string, isDir: boolean) => boolean;

export function loadIgnore(dir: string): IgnoreFn {
  // Case-sensitive, as git on Linux (core.ignorecase false).
  const rules = ignore({ ignorecase: false });
  const file = join(dir, '.gitignore');
  if (existsSync(file) && statSync(file).isFile() && statSync(file).size < MAX_FILE_BYTES) {
    const lines = readFileSync(file, 'utf8').split(/\r?\n/).slice(0, MAX_PATTERNS);
    rules.add(lines.filter((l) => l.length <= MAX_PATTERN_CHARS));
  }
  return (relPath, isDir) => {
    if (!relPath) return false;
    if (relPath.split('/').some((p) => ALWAYS.includes(p))) return true;
    try {
      // A directory is asked with its trailing slash, so that `name/` patterns apply to it.
      return rules.ignores(isDir ? `${relPath}/` : relPath);
    } catch {
      // Not a relative path the package accepts (`..`): kept, as git would not be asked.
      return false;
    }
  };
}
