import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { checksum, crc32Hex } from './checksum.ts';
import { RUNTIME_V8_FLAGS } from './v8-flags.ts';

const MAGIC = 0x38765345; // 'ESv8', little-endian
const FORMAT = 1;
const HEADER = 24; // magic, format, source checksum, source length, data checksum, data length: six u32

/**
 * The code cache's files: one per chunk and per way of running node, `<chunk>.<options>.v8cache`, each a 24-byte header
 * (the chunk's source checksum and length, the payload's checksum and length) then V8's cache data. V8 itself refuses
 * data of another V8 version or other options, but identifies the source by its length only, and a damaged payload
 * could reach its deserializer: so a file is used only if its header matches the source about to be compiled and its
 * payload's checksum; anything else counts as missing, and the chunk is compiled as usual and its file written again.
 */
export class CodeCacheStore {
  /** Node version, platform and options: a cache made under others is kept apart, not overwritten in turn. */
  private readonly options = crc32Hex(
    Buffer.from(
      [
        process.version,
        process.arch,
        process.platform,
        ...process.execArgv,
        process.env.NODE_OPTIONS ?? '',
        ...RUNTIME_V8_FLAGS,
      ].join('\0'),
    ),
  );

  constructor(readonly dir: string) {}

  /** The cache data for `source` (the chunk's file), or null when missing, stale or damaged. */
  read(chunk: string, source: Buffer): Buffer | null {
    const file = readPrivateFile(this.path(chunk));
    if (!file) return null;
    if (file.length < HEADER) return null;
    const [magic, format, sourceSum, sourceLength, dataSum, dataLength] = [0, 4, 8, 12, 16, 20].map((o) =>
      file.readUInt32LE(o),
    );
    if (magic !== MAGIC || format !== FORMAT || dataLength !== file.length - HEADER) return null;
    if (sourceLength !== source.length || sourceSum !== checksum(source)) return null;
    const data = file.subarray(HEADER);
    return dataSum === checksum(data) ? data : null;
  }

  /** Writes a chunk's cache data whole or not at all (a temporary file renamed over it), readable by the user only. */
  write(chunk: string, source: Buffer, data: Buffer): void {
    const header = Buffer.alloc(HEADER);
    [MAGIC, FORMAT, checksum(source), source.length, checksum(data), data.length].forEach((v, i) => {
      header.writeUInt32LE(v, i * 4);
    });
    const path = this.path(chunk);
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, Buffer.concat([header, data]), { mode: 0o600 });
      renameSync(tmp, path);
    } catch {
      rmSync(tmp, { force: true });
    }
  }

  /**
   * Removes the files of chunks that `exists` no longer knows (an earlier build's), made under any options, and the
   * temporary files of writes that never finished (a process killed mid-write), once they are an hour old.
   */
  sweep(exists: (chunk: string) => boolean): void {
    const hourAgo = Date.now() - 3_600_000;
    for (const name of readdirSync(this.dir)) {
      const cached = /^(.+)\.[0-9a-f]{8}\.v8cache(\.\d+\.tmp)?$/.exec(name);
      if (!cached) continue;
      const path = join(this.dir, name);
      const gone = cached[2] ? (lstatSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0) < hourAgo : false;
      if (gone || !exists(cached[1].replaceAll('+', '/'))) rmSync(path, { force: true });
    }
  }

  private path(chunk: string): string {
    // A chunk's path in the bundle (`vendor/jose.cjs`) as one file name (`vendor+jose.cjs`).
    return join(this.dir, `${chunk.replaceAll('/', '+')}.${this.options}.v8cache`);
  }
}

/** A file's content if it is a regular file (not a link) of the user's that nobody else may write, else null. */
function readPrivateFile(path: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    const uid = process.getuid?.();
    if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) return null;
    return readFileSync(fd);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
