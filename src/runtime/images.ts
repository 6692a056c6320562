import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';
import { type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type Docker from 'dockerode';
import { loadTarStream } from '../shared/tar-stream.ts';

// The base stack image is `FROM scratch` + a static busybox (shell, httpd, nc…): the host's (Debian's
// busybox-static) when it has one, else the one of the official `busybox` image, which the engine pulls from its
// registry (macOS, Windows, other Linux distributions: no host tool but the engine, issue 36).

export const BUSYBOX_CANDIDATES = ['/bin/busybox', '/usr/bin/busybox'];
/** The official image whose static (musl) busybox the base image takes when the host has none. */
export const BUSYBOX_REGISTRY_IMAGE = 'busybox:stable-musl';

const STACK_DOCKERFILE_TAIL = `RUN ["/bin/busybox", "--install", "-s", "/bin"]
ENV PATH=/usr/local/bin:/usr/bin:/bin HOME=/app
WORKDIR /app
CMD ["sh"]
`;
const STACK_DOCKERFILE = `FROM scratch
COPY busybox /bin/busybox
${STACK_DOCKERFILE_TAIL}`;
const REGISTRY_STACK_DOCKERFILE = `FROM ${BUSYBOX_REGISTRY_IMAGE} AS busybox
FROM scratch
COPY --from=busybox /bin/busybox /bin/busybox
${STACK_DOCKERFILE_TAIL}`;

/** The host's static busybox, or null. */
function hostBusybox(candidates: string[]): string | null {
  return candidates.find((p) => existsSync(p)) ?? null;
}

/**
 * Builds `tag` from the busybox recipe unless the engine already has it: with the host's busybox, else with the
 * official image's. Returns true when it built; throws naming both ways when neither gives a busybox.
 */
export async function ensureBusyboxImage(
  docker: Docker,
  tag: string,
  candidates: string[] = BUSYBOX_CANDIDATES,
): Promise<boolean> {
  try {
    await docker.getImage(tag).inspect();
    return false;
  } catch {
    // not there yet: build it
  }
  const host = hostBusybox(candidates);
  const { pack } = await loadTarStream();
  const tar = pack();
  tar.entry({ name: 'Dockerfile' }, host ? STACK_DOCKERFILE : REGISTRY_STACK_DOCKERFILE);
  if (host) tar.entry({ name: 'busybox', mode: 0o755 }, readFileSync(host));
  tar.finalize();
  const labels: Record<string, string> = { 'io.scalingo-emulator.base': 'busybox' };
  if (!host) labels['io.scalingo-emulator.base-image'] = BUSYBOX_REGISTRY_IMAGE;
  try {
    const stream = await docker.buildImage(tar as unknown as NodeJS.ReadableStream, { t: tag, labels });
    await followBuild(docker, stream);
  } catch (err) {
    if (host) throw err;
    throw new Error(
      `no static busybox on this machine (looked at ${candidates.join(', ')}) and the engine could not build from ` +
        `${BUSYBOX_REGISTRY_IMAGE} (${(err as Error).message}): let the engine reach Docker Hub or a registry mirror, ` +
        `or install Debian's busybox-static`,
    );
  }
  return true;
}

/** Waits for a build stream to end; a build error in the stream becomes a thrown Error with the output. */
export function followBuild(
  docker: Docker,
  stream: NodeJS.ReadableStream,
  onLine?: (line: string) => void,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    docker.modem.followProgress(
      stream,
      (err: Error | null, res: Array<{ error?: string; errorDetail?: { message?: string } }>) => {
        const failed = err ?? res.find((r) => r.error);
        if (failed) reject(Object.assign(new Error(err?.message ?? (failed as { error: string }).error), { output }));
        else resolve(output);
      },
      (event: { stream?: string; error?: string }) => {
        const text = event.stream ?? (event.error ? `${event.error}\n` : '');
        if (!text) return;
        output += text;
        if (onLine) for (const line of text.split('\n')) if (line.trim()) onLine(line);
      },
    );
  });
}

/**
 * Packs a directory as a build context (tar), skipping .git; `extra` files (e.g. a generated
 * Dockerfile) are added or replace the directory's own. Returns at once: files are streamed in
 * as the engine reads (never a whole file or context in memory); only regular files,
 * directories and symbolic links are packed (a FIFO or a device is never opened).
 */
export async function packDirectory(dir: string, extra: Record<string, string> = {}): Promise<Readable> {
  const { pack } = await loadTarStream();
  const tar = pack();
  void walkInto(tar, dir, dir, '', (name) => name in extra || name === '.git').then(
    () => {
      for (const [name, content] of Object.entries(extra)) tar.entry({ name, mode: 0o644 }, content);
      tar.finalize();
    },
    (err: Error) => tar.destroy(err),
  );
  return tar as unknown as Readable;
}

/** One directory of a packed tree: its content goes under `to` in the archive. */
export interface TreePart {
  from: string;
  to: string;
}

/** What a packed tree holds besides its directories (paths relative to the archive's root). */
export interface TreeExtras {
  /** path → target, relative to the link's directory. The files they point to are made executable, as npm does a `bin`. */
  symlinks?: Record<string, string>;
  /** path → target, relative to the archive's root: the target must exist where the archive is unpacked. */
  hardlinks?: Record<string, string>;
  /** Directories to create, empty. */
  dirs?: string[];
  /** Small files: path → content. */
  files?: Record<string, string>;
}

/**
 * Packs several directories into one archive, each under its own path (with the directories leading
 * to it), plus links and empty directories. Streamed as the reader takes it, like packDirectory.
 */
export async function packTree(parts: TreePart[], extras: TreeExtras = {}): Promise<Readable> {
  const { pack } = await loadTarStream();
  const tar = pack();
  const symlinks = extras.symlinks ?? {};
  const executable = new Set(Object.entries(symlinks).map(([at, target]) => posix.join(posix.dirname(at), target)));
  const made = new Set<string>();
  const dirs = (path: string) => {
    const segments = path.split('/').filter((x) => x && x !== '.');
    for (let i = 1; i <= segments.length; i++) {
      const name = segments.slice(0, i).join('/');
      if (!made.has(name)) tar.entry({ name, type: 'directory', mode: 0o755 }), made.add(name);
    }
  };
  void (async () => {
    for (const part of parts) {
      dirs(part.to);
      await walkInto(tar, part.from, part.from, part.to, () => false, executable);
    }
    for (const dir of extras.dirs ?? []) dirs(dir);
    for (const [name, linkname] of Object.entries(symlinks)) {
      dirs(posix.dirname(name));
      tar.entry({ name, type: 'symlink', linkname });
    }
    for (const [name, linkname] of Object.entries(extras.hardlinks ?? {})) {
      dirs(posix.dirname(name));
      tar.entry({ name, type: 'link', linkname });
    }
    for (const [name, content] of Object.entries(extras.files ?? {})) {
      dirs(posix.dirname(name));
      tar.entry({ name, mode: 0o644 }, content);
    }
  })().then(
    () => tar.finalize(),
    (err: Error) => tar.destroy(err),
  );
  return tar as unknown as Readable;
}

type Pack = ReturnType<Awaited<ReturnType<typeof loadTarStream>>['pack']>;

/** Adds `current` (under `root`) to the archive at `prefix`: regular files, directories and symbolic links only. */
async function walkInto(
  tar: Pack,
  root: string,
  current: string,
  prefix: string,
  skip: (name: string) => boolean,
  executable: Set<string> = new Set(),
): Promise<void> {
  for (const entry of await readdir(current)) {
    const full = join(current, entry);
    const rel = relative(root, full).split(sep).join('/');
    if (skip(rel)) continue;
    const name = prefix ? `${prefix}/${rel}` : rel;
    const st = await lstat(full);
    const mode = executable.has(name) ? (st.mode & 0o7777) | 0o755 : st.mode & 0o7777;
    if (st.isDirectory()) {
      tar.entry({ name, type: 'directory', mode });
      await walkInto(tar, root, full, prefix, skip, executable);
    } else if (st.isSymbolicLink()) {
      tar.entry({ name, type: 'symlink', linkname: await readlink(full) });
    } else if (st.isFile() && st.size === 0) {
      tar.entry({ name, mode, mtime: st.mtime }, '');
    } else if (st.isFile()) {
      const sink = tar.entry({ name, mode, mtime: st.mtime, size: st.size });
      await pipeline(
        createReadStream(full, { end: Math.max(0, st.size - 1), highWaterMark: 64 * 1024 }),
        sink as unknown as NodeJS.WritableStream,
      );
    }
  }
}
