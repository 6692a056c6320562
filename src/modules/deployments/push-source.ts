import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { x as untar } from 'tar';
import type { Source } from './sources.ts';

/** Largest tree a pushed commit may extract to (the same bound as a downloaded archive). */
const MAX_TREE_BYTES = 512 * 1024 * 1024;
const ARCHIVE_TIMEOUT_MS = 120_000;
const COMMIT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * The files of a pushed commit, written to `dest` by `git archive` (no clone, no .git): the
 * commit's objects may still be in git's quarantine while the pre-receive hook runs, so the
 * hook's GIT_OBJECT_DIRECTORY / GIT_ALTERNATE_OBJECT_DIRECTORIES come along in `source.gitEnv`.
 */
export async function extractPushedCommit(source: Source, dest: string, say: (line: string) => void): Promise<string> {
  const sha = source.gitRef ?? '';
  if (!COMMIT_ID.test(sha)) throw new Error(`not a commit id: "${sha}"`);
  say(`-----> Code pushed at commit ${sha}`);
  await mkdir(dest, { recursive: true });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', GIT_DIR: source.location, ...source.gitEnv };
  // An argv array, never a shell; the commit id is checked above.
  const child = spawn('git', ['archive', '--format=tar', sha], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: ARCHIVE_TIMEOUT_MS });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    if (stderr.length < 4096) stderr += d;
  });
  let bytes = 0;
  const bounded = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      done(bytes > MAX_TREE_BYTES ? new Error(`the pushed tree is larger than ${MAX_TREE_BYTES} bytes`) : null, chunk);
    },
  });
  const unpack = untar({ cwd: dest, strict: true });
  const exited = new Promise<number>((ok) => {
    child.once('error', () => ok(-1));
    child.once('close', (code) => ok(code ?? -1));
  });
  const written = new Promise<void>((ok, fail) => {
    unpack.once('close', () => ok());
    unpack.once('error', fail);
    bounded.once('error', fail);
  });
  child.stdout.pipe(bounded).pipe(unpack);
  try {
    await written;
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`cannot read the pushed commit: ${(err as Error).message}`);
  }
  const code = await exited;
  if (code !== 0) throw new Error(`cannot read the pushed commit ${sha}: ${stderr.trim() || `git archive exited with ${code}`}`);
  return dest;
}
