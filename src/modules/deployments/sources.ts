import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractArchive, openLocalArchive, SourceError, type SourceLimits, timeLimit } from './archive-extract.ts';
import { openHttpArchive } from './http-archive.ts';
import { extractPushedCommit } from './push-source.ts';

export { SourceError, type SourceLimits } from './archive-extract.ts';

export type SourceKind = 'directory' | 'git' | 'archive' | 'push';
export interface Source {
  kind: SourceKind;
  /** Directory path, git URL (local path or file://), archive URL (path, file://, http(s)://), or the app's bare repository (push). */
  location: string;
  gitRef?: string | null;
  /** push: where git keeps the pushed objects while its pre-receive hook runs (GIT_OBJECT_DIRECTORY…). */
  gitEnv?: Record<string, string>;
}

/** Used by the tests and by config-less callers; emulator.ts passes `config.sources`. */
export const DEFAULT_SOURCE_LIMITS: SourceLimits = {
  maxArchiveBytes: 512 * 1024 * 1024,
  maxExpandedBytes: 1536 * 1024 * 1024,
  maxFileBytes: 512 * 1024 * 1024,
  maxEntries: 100_000,
  timeoutMs: 300_000,
};

/** A git_source or git_ref git would read as an option (`--upload-pack=…`). */
export const looksLikeOption = (value: string) => value.startsWith('-');

/**
 * Puts the source's files in a directory ready to build: a bound directory is used as is; a git
 * repository is cloned (at git_ref when given); an archive is extracted (a single top-level folder,
 * as the platform's archives have, becomes the root). Untrusted sources (git, archives) are read
 * as streams with every limit enforced while reading; a refusal throws SourceError.
 */
export async function prepareSource(
  source: Source,
  workDir: string,
  say: (line: string) => void,
  limits: SourceLimits = DEFAULT_SOURCE_LIMITS,
): Promise<string> {
  if (source.kind === 'directory') {
    if (!existsSync(source.location)) throw new Error(`source directory ${source.location} does not exist`);
    return source.location;
  }
  await mkdir(workDir, { recursive: true });
  if (source.kind === 'push') return extractPushedCommit(source, join(workDir, 'src'), say, limits);
  const dest = join(workDir, 'src');
  await mkdir(dest, { recursive: true });
  if (source.kind === 'git') {
    await cloneGit(source, workDir, dest, say, limits);
    return dest;
  }
  say(`-----> Fetching archive ${source.location}`);
  const { signal, clear } = timeLimit(limits, 'fetching and extracting the archive');
  try {
    const input = /^https?:\/\//i.test(source.location)
      ? await openHttpArchive(source.location, limits, signal)
      : await openLocalArchive(
          source.location.startsWith('file://') ? fileURLToPath(source.location) : resolve(source.location),
          limits,
        );
    const r = await extractArchive(input, dest, limits, signal, 'the archive');
    say(`       ${r.entries} entries, ${Math.round(r.bytes / 1024)} KB`);
  } finally {
    clear();
  }
  const top = await readdir(dest);
  if (top.length === 1 && (await stat(join(dest, top[0]))).isDirectory()) return join(dest, top[0]);
  return dest;
}

// Only the transports a developer's git_source uses; `ext::` (runs a command) and `fd::` never.
const GIT_SAFETY = [
  '-c',
  'protocol.ext.allow=never',
  '-c',
  'protocol.fd.allow=never',
  '-c',
  'core.hooksPath=/dev/null',
];
const GIT_ENV = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true', SSH_ASKPASS: 'true' };

/**
 * A bare clone (its size on disk measured while it runs, killed past maxArchiveBytes or the time
 * limit), then `git archive` of the commit streamed through the same extraction as an archive:
 * entry count, file sizes, total size and links are checked the same way.
 */
async function cloneGit(
  source: Source,
  workDir: string,
  dest: string,
  say: (line: string) => void,
  limits: SourceLimits,
): Promise<void> {
  const url = source.location;
  if (looksLikeOption(url)) throw new SourceError(`git source ${url} is not a repository URL`);
  if (source.gitRef && looksLikeOption(source.gitRef))
    throw new SourceError(`git ref ${source.gitRef} is not a branch, tag or commit`);
  say(`-----> Cloning ${url}${source.gitRef ? ` at ${source.gitRef}` : ''}`);
  const repo = join(workDir, 'repo.git');
  const { signal, clear } = timeLimit(limits, `cloning ${url}`);
  try {
    await git(['clone', '--bare', '--quiet', '--', url, repo], {
      signal,
      watch: { dir: repo, max: limits.maxArchiveBytes },
      what: `git clone of ${url}`,
    });
    const ref = `${source.gitRef || 'HEAD'}^{commit}`;
    const sha = (
      await git(['-C', repo, 'rev-parse', '--verify', '--quiet', '--end-of-options', ref], {
        signal,
        what: `git ref ${source.gitRef || 'HEAD'}`,
      })
    ).trim();
    if (!/^[0-9a-f]{40,64}$/.test(sha))
      throw new SourceError(`git ref ${source.gitRef || 'HEAD'} is not a commit of ${url}`);
    say(`       At commit ${sha}`);
    const child = spawn('git', [...GIT_SAFETY, '-C', repo, 'archive', '--format=tar', sha], {
      env: GIT_ENV,
      stdio: ['ignore', 'pipe', 'ignore'],
      signal,
    });
    child.on('error', () => undefined);
    try {
      await extractArchive(child.stdout, dest, limits, signal, `the repository ${url}`, false);
    } finally {
      child.kill('SIGKILL');
    }
  } finally {
    clear();
  }
}

/** Runs git with a time limit, stderr kept bounded; `watch` kills it once a directory grows past max. */
function git(
  args: string[],
  o: { signal: AbortSignal; watch?: { dir: string; max: number }; what: string },
): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn('git', [...GIT_SAFETY, ...args], {
      env: GIT_ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: o.signal,
    });
    let out = '';
    let err = '';
    let tooBig = false;
    child.stdout.on('data', (c: Buffer) => (out = (out + c.toString()).slice(0, 64 * 1024)));
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(0, 8 * 1024)));
    const watch = o.watch;
    const timer = watch
      ? setInterval(() => {
          void dirSize(watch.dir).then((n) => {
            if (n > watch.max && !tooBig) {
              tooBig = true;
              child.kill('SIGKILL');
            }
          });
        }, 200)
      : undefined;
    child.on('error', (e) => {
      if (timer) clearInterval(timer);
      fail(o.signal.aborted ? o.signal.reason : new SourceError(`${o.what} failed: ${e.message}`));
    });
    child.on('close', (code) => {
      if (timer) clearInterval(timer);
      if (o.signal.aborted) return fail(o.signal.reason);
      if (tooBig && watch)
        return fail(new SourceError(`${o.what} is larger than the limit of ${Math.round(watch.max / 1024 / 1024)} MB`));
      if (code !== 0) return fail(new SourceError(`${o.what} failed: ${err.trim() || `exit code ${code}`}`));
      ok(out);
    });
  });
}

/** Bytes under a directory (0 while it does not exist yet). */
async function dirSize(dir: string): Promise<number> {
  let total = 0;
  const walk = async (d: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(d);
    } catch {
      return;
    }
    for (const n of names) {
      const st = await lstat(join(d, n)).catch(() => null);
      if (!st) continue;
      if (st.isDirectory()) await walk(join(d, n));
      else total += st.size;
    }
  };
  await walk(dir);
  return total;
}
