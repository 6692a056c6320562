// The folder as the .tar.gz the platform's `scalingo deploy` uploads: what git would hold (ignore.ts),
// regular files, directories and symbolic links, with a bound on entries.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { create } from 'tar';
import { loadIgnore } from './ignore.ts';
import { UpError } from './up-error.ts';

const MAX_ENTRIES = 100_000;

/** Writes the archive in a temporary directory; `cleanup` removes it. */
export async function archiveFolder(
  dir: string,
): Promise<{ file: string; size: number; cleanup: () => Promise<void> }> {
  const ignored = loadIgnore(dir);
  const tmp = await mkdtemp(join(tmpdir(), 'scalingo-up-'));
  const file = join(tmp, 'code.tar.gz');
  let entries = 0;
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
          if (ignored(rel, 'isDirectory' in st && st.isDirectory())) return false;
          if (++entries > MAX_ENTRIES)
            throw new UpError(
              `${dir}: more than ${MAX_ENTRIES} files to deploy (is a build output missing from .gitignore?)`,
            );
          return true;
        },
      },
      ['.'],
    );
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err instanceof UpError ? err : new UpError(`${dir}: cannot archive the code: ${(err as Error).message}`);
  }
  const { size } = await stat(file);
  return { file, size, cleanup: () => rm(tmp, { recursive: true, force: true }) };
}
