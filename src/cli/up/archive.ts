// The folder as the .tar.gz the platform's `scalingo deploy` uploads: what git would hold (ignore.ts),
// regular files, directories and symbolic links, with a bound on entries. The archive lives in a
// temporary directory removed on every path: after its upload, on an error, and when the process exits
// before that (a second Ctrl-C).
import { rmSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { create } from 'tar';
import { loadIgnore } from './ignore.ts';
import { UpError } from './up-error.ts';

const MAX_ENTRIES = 100_000;
/** Temporary directories of archives not removed yet: the process's exit removes them. */
const live = new Set<string>();
let exitHookSet = false;

function track(tmp: string): () => Promise<void> {
  live.add(tmp);
  if (!exitHookSet) {
    exitHookSet = true;
    process.once('exit', () => {
      for (const dir of live) rmSync(dir, { recursive: true, force: true });
    });
  }
  return async () => {
    await rm(tmp, { recursive: true, force: true });
    live.delete(tmp);
  };
}

/** Writes the archive in a temporary directory; `cleanup` removes it. */
export async function archiveFolder(
  dir: string,
): Promise<{ file: string; size: number; cleanup: () => Promise<void> }> {
  const ignored = loadIgnore(dir);
  const tmp = await mkdtemp(join(tmpdir(), 'scalingo-up-'));
  const cleanup = track(tmp);
  const file = join(tmp, 'code.tar.gz');
  let entries = 0;
  // Thrown from tar's filter, an error would escape its walk (an uncaught exception): counted there, refused after.
  let tooMany = false;
  try {
    await create(
      {
        gzip: { level: 1 },
        file,
        cwd: dir,
        portable: true,
        filter: (path, st) => {
          const rel = relative(dir, join(dir, path)).split(sep).join('/');
          if (!rel) return true;
          if (tooMany || ignored(rel, 'isDirectory' in st && st.isDirectory())) return false;
          if (++entries > MAX_ENTRIES) tooMany = true;
          return !tooMany;
        },
      },
      ['.'],
    );
    if (tooMany)
      throw new UpError(
        `${dir}: more than ${MAX_ENTRIES} files to deploy (is a build output missing from .gitignore?)`,
      );
  } catch (err) {
    await cleanup();
    throw err instanceof UpError ? err : new UpError(`${dir}: cannot archive the code: ${(err as Error).message}`);
  }
  const { size } = await stat(file);
  return { file, size, cleanup };
}
