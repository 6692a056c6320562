import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdir, readdir, stat, writeFile, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { x as untar } from 'tar';
import { extractPushedCommit } from './push-source.ts';

const run = promisify(execFile);

export type SourceKind = 'directory' | 'git' | 'archive' | 'push';
export interface Source {
  kind: SourceKind;
  /** Directory path, git URL (local path or file://), archive URL (path, file://, http(s)://), or the app's bare repository (push). */
  location: string;
  gitRef?: string | null;
  /** push: where git keeps the pushed objects while its pre-receive hook runs (GIT_OBJECT_DIRECTORY…). */
  gitEnv?: Record<string, string>;
}

/** Largest archive downloaded for a deployment. */
const MAX_ARCHIVE_BYTES = 512 * 1024 * 1024;

/**
 * Puts the source's files in a directory ready to build: a bound directory is used as is; a git
 * repository is cloned (at git_ref when given); an archive is extracted (a single top-level folder,
 * as the platform's archives have, becomes the root).
 */
export async function prepareSource(source: Source, workDir: string, say: (line: string) => void): Promise<string> {
  if (source.kind === 'directory') {
    if (!existsSync(source.location)) throw new Error(`source directory ${source.location} does not exist`);
    return source.location;
  }
  await mkdir(workDir, { recursive: true });
  if (source.kind === 'push') return extractPushedCommit(source, join(workDir, 'src'), say);
  if (source.kind === 'git') {
    const dest = join(workDir, 'src');
    const url = source.location;
    say(`-----> Cloning ${url}${source.gitRef ? ` at ${source.gitRef}` : ''}`);
    try {
      await run('git', ['clone', '--quiet', url, dest], { timeout: 120_000 });
      if (source.gitRef) await run('git', ['-C', dest, 'checkout', '--quiet', source.gitRef], { timeout: 60_000 });
      const { stdout } = await run('git', ['-C', dest, 'rev-parse', 'HEAD']);
      say(`       At commit ${stdout.trim()}`);
    } catch (err) {
      throw new Error(`git clone of ${url} failed: ${((err as { stderr?: string }).stderr || (err as Error).message).trim()}`);
    }
    return dest;
  }
  // archive
  const file = join(workDir, 'source.tar.gz');
  say(`-----> Fetching archive ${source.location}`);
  if (/^https?:\/\//i.test(source.location)) {
    const res = await fetch(source.location, { redirect: 'follow' });
    if (!res.ok) throw new Error(`cannot download ${source.location}: HTTP ${res.status}`);
    const buf = Buffer.from(await res.arrayBuffer());
    if (buf.length > MAX_ARCHIVE_BYTES) throw new Error(`archive larger than ${MAX_ARCHIVE_BYTES} bytes`);
    await writeFile(file, buf);
  } else {
    const path = source.location.startsWith('file://') ? fileURLToPath(source.location) : resolve(source.location);
    if (!existsSync(path)) throw new Error(`archive ${path} does not exist`);
    await writeFile(file, await readFile(path));
  }
  const dest = join(workDir, 'src');
  await mkdir(dest, { recursive: true });
  try {
    await untar({ file, cwd: dest, strict: true });
  } catch (err) {
    throw new Error(`cannot extract the archive (a .tar.gz is expected): ${(err as Error).message}`);
  }
  const top = await readdir(dest);
  if (top.length === 1 && (await stat(join(dest, top[0]))).isDirectory()) return join(dest, top[0]);
  return dest;
}
