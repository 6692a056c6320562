// Changes of the folder, debounced: one call after a burst of writes (an editor's save, a git checkout).
// What is not deployed (ignore.ts) is not watched.
import { watch } from 'chokidar';
import { relative, sep } from 'node:path';
import { statSync } from 'node:fs';
import { loadIgnore } from './ignore.ts';

export async function watchFolder(
  dir: string,
  debounceMs: number,
  onChange: (path: string) => void,
): Promise<{ close(): Promise<void> }> {
  let ignored = loadIgnore(dir);
  let timer: NodeJS.Timeout | undefined;
  let last = '';
  const w = watch(dir, {
    ignoreInitial: true,
    ignored: (path: string, stats?: { isDirectory(): boolean }) => {
      const rel = relative(dir, path).split(sep).join('/');
      if (!rel || rel.startsWith('..')) return false;
      const isDir = stats ? stats.isDirectory() : safeIsDir(path);
      return ignored(rel, isDir);
    },
  });
  w.on('error', () => undefined);
  w.on('all', (_event, path) => {
    last = relative(dir, path).split(sep).join('/');
    if (last === '.gitignore') ignored = loadIgnore(dir);
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => onChange(last), debounceMs);
  });
  await new Promise<void>((ok) => w.once('ready', () => ok()));
  return {
    async close() {
      if (timer) clearTimeout(timer);
      await w.close();
    },
  };
}

function safeIsDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
