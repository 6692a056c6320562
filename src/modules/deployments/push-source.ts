import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { extractArchive, SourceError, type SourceLimits, timeLimit } from './archive-extract.ts';
import { type Source } from './sources.ts';

const COMMIT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * The files of a pushed commit, written to `dest` by `git archive` (no clone, no .git) through the
 * same bounded extraction as archives and git sources (entries, sizes, links, time). The commit's
 * objects may still be in git's quarantine while the pre-receive hook runs, so the hook's
 * GIT_OBJECT_DIRECTORY / GIT_ALTERNATE_OBJECT_DIRECTORIES come along in `source.gitEnv`.
 */
export async function extractPushedCommit(
  source: Source,
  dest: string,
  say: (line: string) => void,
  limits: SourceLimits,
): Promise<string> {
  const sha = source.gitRef ?? '';
  if (!COMMIT_ID.test(sha)) throw new SourceError(`not a commit id: "${sha}"`);
  say(`-----> Code pushed at commit ${sha}`);
  await mkdir(dest, { recursive: true });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/',
    GIT_DIR: source.location,
    ...source.gitEnv,
  };
  const { signal, clear } = timeLimit(limits, `reading the pushed commit ${sha}`);
  try {
    // An argv array, never a shell; the commit id is checked above.
    const child = spawn('git', ['archive', '--format=tar', sha], { env, stdio: ['ignore', 'pipe', 'pipe'], signal });
    child.on('error', () => undefined);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < 4096) stderr += d;
    });
    const exited = new Promise<number>((ok) => child.once('close', (code) => ok(code ?? -1)));
    try {
      // The tar stream counts against maxArchiveBytes: the pushed tree, as an archive would.
      await extractArchive(child.stdout, dest, limits, signal, `the pushed commit ${sha}`);
    } catch (err) {
      child.kill('SIGKILL');
      await exited;
      if (stderr.trim() && !(err instanceof SourceError && !/cannot extract/.test(err.message)))
        throw new SourceError(`cannot read the pushed commit ${sha}: ${stderr.trim()}`);
      throw err;
    }
    const code = await exited;
    if (code !== 0)
      throw new SourceError(
        `cannot read the pushed commit ${sha}: ${stderr.trim() || `git archive exited with ${code}`}`,
      );
  } finally {
    clear();
  }
  return dest;
}
