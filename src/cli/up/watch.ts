// Changes of the folder, debounced: one call after a burst of writes (an editor's save, a git checkout),
// with the files that changed. What is not deployed (ignore.ts) is not watched. An editor's save is one
// change: chokidar's `atomic` turns a file deleted and written again (vim's backup rename, an atomic
// rename-on-save) into one `change` and leaves out swap and backup files (`.x.swp`, `x~`), and
// `awaitWriteFinish` holds each event until the file stops growing, so a temporary file renamed or
// deleted before that (sed -i's `sedXXXXXX`, vim's `4913` probe, an editor's `.tmp`) makes none.

import { statSync } from 'node:fs';
import { relative, sep } from 'node:path';
import { type FolderWatch, watchFolderTree } from '../../shared/folder-watch.ts';
import { loadIgnore } from './ignore.ts';

/** How long a file's size must stay the same before its event (chokidar polls it every STABLE_POLL_MS). */
const STABLE_MS = 120;
const STABLE_POLL_MS = 40;

export async function watchFolder(
  dir: string,
  debounceMs: number,
  onChange: (paths: string[]) => void,
  warn: (line: string) => void,
): Promise<FolderWatch> {
  let ignored = loadIgnore(dir);
  let timer: NodeJS.Timeout | undefined;
  const changed = new Set<string>();
  const w = await watchFolderTree(
    dir,
    {
      ignoreInitial: true,
      atomic: true,
      awaitWriteFinish: { stabilityThreshold: STABLE_MS, pollInterval: STABLE_POLL_MS },
      ignored: (path: string, stats?: { isDirectory(): boolean }) => {
        const rel = relative(dir, path).split(sep).join('/');
        if (!rel || rel.startsWith('..')) return false;
        const isDir = stats ? stats.isDirectory() : safeIsDir(path);
        return ignored(rel, isDir);
      },
    },
    {
      warn,
      onEvent: (_event, path) => {
        const rel = relative(dir, path).split(sep).join('/');
        if (rel === '.gitignore') ignored = loadIgnore(dir);
        changed.add(rel);
        if (timer) clearTimeout(timer);
        timer = setTimeout(() => {
          const paths = [...changed].sort();
          changed.clear();
          onChange(paths);
        }, debounceMs);
      },
    },
  );
  return {
    async close() {
      if (timer) clearTimeout(timer);
      await w.close();
    },
  };
}

/** The files of one change, for a line: the first three, and how many more. */
export function describeChange(paths: string[]): string {
  const shown = paths.slice(0, 3).join(', ');
  return paths.length > 3 ? `${shown} and ${paths.length - 3} more` : shown;
}

function safeIsDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
