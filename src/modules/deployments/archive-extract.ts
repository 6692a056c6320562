// Streams an untrusted archive into a build directory with every limit enforced while reading:
// bytes received, bytes after decompression, number of entries, size of each file, total time.
// Nothing is ever buffered whole, so the emulator's memory does not depend on the source; the
// `tar` package's own safety options (no absolute paths, no `..`, no writing through symlinks,
// strict mode) stay on, and entries that would point outside the directory are refused first.

import { constants, type Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { posix } from 'node:path';
import { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { isDiskFull } from '../../shared/disk-full.ts';

export interface SourceLimits {
  /** Bytes read from the source (the archive as given, or a git clone on disk). */
  maxArchiveBytes: number;
  /** Bytes after decompression (the tar stream). */
  maxExpandedBytes: number;
  maxFileBytes: number;
  maxEntries: number;
  /** Fetching and extracting together. */
  timeoutMs: number;
}

/** A source refused or cut by a limit: its message is shown in the deployment's output. */
export class SourceError extends Error {}

const mb = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MB`;

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/**
 * Opens a local archive: only a regular file is read. It is checked before opening (a device may
 * act on open) and again on the open descriptor (the path may change meanwhile); O_NONBLOCK keeps a
 * FIFO swapped in from blocking the open, and a socket cannot be opened at all.
 */
export async function openLocalArchive(path: string, limits: SourceLimits): Promise<Readable> {
  const before = await stat(path).catch((err: NodeJS.ErrnoException) => {
    throw new SourceError(
      err.code === 'ENOENT'
        ? `archive ${path} does not exist`
        : `cannot read archive ${path}: ${err.code ?? err.message}`,
    );
  });
  if (!before.isFile())
    throw new SourceError(`archive ${path} is ${kindOf(before)}: a regular .tar.gz file is expected`);
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY).catch(
    (err: NodeJS.ErrnoException) => {
      throw new SourceError(`cannot open archive ${path}: ${err.code ?? err.message}`);
    },
  );
  const st = await fh.stat();
  if (!st.isFile()) {
    await fh.close();
    throw new SourceError(`archive ${path} is ${kindOf(st)}: a regular .tar.gz file is expected`);
  }
  if (st.size > limits.maxArchiveBytes) {
    await fh.close();
    throw new SourceError(`archive ${path} is ${mb(st.size)}: larger than the limit of ${mb(limits.maxArchiveBytes)}`);
  }
  return fh.createReadStream({ highWaterMark: 64 * 1024 });
}

/** Counts bytes going through and fails the pipeline past the limit. */
function meter(limit: number, describe: () => string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (seen > limit) return cb(new SourceError(describe()));
      cb(null, chunk);
    },
  });
}

/** The stream with its first bytes (at least n when there are that many) known: gzip or a plain tar is decided from them. */
async function sniff(input: Readable, n: number): Promise<{ head: Buffer; stream: Readable }> {
  const it = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first: Buffer[] = [];
  let size = 0;
  let ended = false;
  while (size < n) {
    const r = await it.next();
    if (r.done) {
      ended = true;
      break;
    }
    first.push(r.value);
    size += r.value.length;
  }
  const head = Buffer.concat(first);
  async function* rest() {
    if (head.length) yield head;
    if (ended) return;
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      yield r.value;
    }
  }
  const stream = Readable.from(rest(), { objectMode: false });
  // Destroying the wrapper (a limit hit) releases the source too.
  stream.once('close', () => void it.return?.().catch(() => undefined));
  return { head, stream };
}

const ALLOWED = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory', 'SymbolicLink', 'Link']);

/** Why an entry may not be extracted, or null. Links must resolve inside the directory. */
export function entryProblem(path: string, type: string, linkpath: string | undefined): string | null {
  if (!ALLOWED.has(type))
    return `${path}: ${type} entries are not accepted (regular files, directories and links only)`;
  if (path.startsWith('/') || /^[a-zA-Z]:/.test(path)) return `${path}: absolute paths are not accepted`;
  if (path.split(/[\\/]/).includes('..')) return `${path}: paths with '..' are not accepted`;
  if (type === 'SymbolicLink' || type === 'Link') {
    const target = linkpath ?? '';
    if (!target || target.startsWith('/'))
      return `${path}: a link to an absolute path (${target || 'empty'}) is not accepted`;
    // A symbolic link resolves from its own directory, a hard link from the archive's root.
    const resolved = posix.normalize(type === 'SymbolicLink' ? posix.join(posix.dirname(path), target) : target);
    if (resolved === '..' || resolved.startsWith('../'))
      return `${path}: a link pointing outside the archive (${target}) is not accepted`;
  }
  return null;
}

/** Compressed data inside the tar stream: tar would decompress it itself, out of the expanded-size meter's sight. */
function nestedCompression(head: Buffer): boolean {
  const gzip = head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
  const zstd = head.length >= 4 && head.readUInt32BE(0) === 0x28b52ffd;
  return gzip || zstd;
}

/** Marks the source stopped on purpose: the archive's end-of-archive blocks were read. */
const ARCHIVE_COMPLETE = new Error('end of archive');

/**
 * Extracts a tar stream (gzip-compressed or not) into `dest`, enforcing every limit while reading.
 * `input` counts against maxArchiveBytes unless `countArchive` is false (git's own tar stream: the
 * clone was measured on disk). Reading stops at the tar end-of-archive blocks: whatever follows is
 * never read (tar's parser would otherwise keep it in memory, growing with every byte received).
 */
export async function extractArchive(
  input: Readable,
  dest: string,
  limits: SourceLimits,
  signal: AbortSignal,
  what: string,
  countArchive = true,
): Promise<{ entries: number; bytes: number }> {
  let entries = 0;
  let expanded = 0;
  let problem: SourceError | null = null;
  const { head, stream: source } = await sniff(input, 2);
  const fail = (msg: string) => {
    problem ??= new SourceError(msg);
    source.destroy(problem);
  };
  const stop = new AbortController();
  // tar is loaded at the first extraction: most starts never extract an archive.
  const { Unpack } = await import('tar');
  const unpack = new Unpack({
    cwd: dest,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    maxDepth: 64,
    zstd: false,
    filter: (path, entry) => {
      if (problem) return false;
      const e = entry as { type?: string; size?: number; linkpath?: string };
      entries++;
      if (entries > limits.maxEntries) fail(`${what} holds more than ${limits.maxEntries} entries (the limit)`);
      else if ((e.size ?? 0) > limits.maxFileBytes)
        fail(`${path} is ${mb(e.size ?? 0)}: larger than the limit of ${mb(limits.maxFileBytes)} per file`);
      else {
        const p = entryProblem(path, e.type ?? 'File', e.linkpath);
        if (p) fail(p);
      }
      return !problem;
    },
  });
  // Unpack is not a Node stream: its end (every file written) and errors are awaited by hand.
  const unpacked = new Promise<void>((ok, failed) => {
    unpack.on('close', () => ok());
    unpack.on('error', (err: Error) => failed(err));
  });
  unpacked.catch(() => undefined);
  let complete = false;
  unpack.on('eof', () => {
    complete = true;
    unpack.end();
    stop.abort(ARCHIVE_COMPLETE);
  });
  const gzip = head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
  const stages: NodeJS.ReadWriteStream[] = [];
  if (countArchive) stages.push(archiveMeter(limits, what));
  if (gzip) stages.push(createGunzip({ chunkSize: 64 * 1024 }));
  // The tar stream's first 4 bytes are held until known (a source may send 1 byte at a time): tar sniffs its first write.
  let lead: Buffer | null = Buffer.alloc(0);
  const feed = new Writable({
    highWaterMark: 64 * 1024,
    write(chunk: Buffer, _enc, cb) {
      if (complete) return cb();
      expanded += chunk.length;
      if (expanded > limits.maxExpandedBytes)
        return cb(new SourceError(`${what} expands to more than ${mb(limits.maxExpandedBytes)} (the limit)`));
      if (lead) {
        chunk = Buffer.concat([lead, chunk]);
        if (chunk.length < 4) return void ((lead = chunk), cb());
        lead = null;
        if (nestedCompression(chunk))
          return cb(
            new SourceError(`${what} holds a compressed archive inside the tar stream: a .tar.gz archive is expected`),
          );
      }
      if (unpack.write(chunk)) cb();
      else unpack.once('drain', () => cb());
    },
    final(cb) {
      if (lead?.length) unpack.write(lead);
      if (!complete) unpack.end();
      cb();
    },
  });
  try {
    const piped = pipeline([source, ...stages, feed], { signal: AbortSignal.any([signal, stop.signal]) }).catch(
      (err) => {
        if (!(complete && !problem && !signal.aborted)) throw err;
      },
    );
    // Settled by Promise.all below; a rejection after the other one failed first is not an unhandled one.
    piped.catch(() => undefined);
    await Promise.all([piped, unpacked]);
  } catch (err) {
    stop.abort(err);
    unpack.abort(err as Error);
    if (problem) throw problem;
    if (signal.aborted) throw signal.reason;
    if (err instanceof SourceError || isDiskFull(err)) throw err;
    const e = err as NodeJS.ErrnoException;
    throw new SourceError(
      `cannot extract ${what} (a .tar.gz archive is expected): ${e.code === 'Z_DATA_ERROR' ? 'invalid gzip data' : e.message}`,
    );
  }
  if (problem) throw problem;
  return { entries, bytes: expanded };
}

/** Fails a reader past maxArchiveBytes (the size a source may have before decompression). */
export function archiveMeter(limits: SourceLimits, what: string): Transform {
  return meter(limits.maxArchiveBytes, () => `${what} is larger than the limit of ${mb(limits.maxArchiveBytes)}`);
}

/** A signal aborted after the time limit, with a readable reason. */
export function timeLimit(limits: SourceLimits, what: string): { signal: AbortSignal; clear(): void } {
  const ctrl = new AbortController();
  const t = setTimeout(
    () => ctrl.abort(new SourceError(`${what} took longer than the limit of ${Math.round(limits.timeoutMs / 1000)} s`)),
    limits.timeoutMs,
  );
  t.unref();
  return { signal: ctrl.signal, clear: () => clearTimeout(t) };
}
