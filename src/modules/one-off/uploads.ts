// Files posted to `<attach_url>/files` land in /tmp/uploads of the one-off container (DOC one-off.md).
// They are copied in as a tar archive rooted at `/`, which creates /tmp and /tmp/uploads when the
// image has none (the busybox stack image is FROM scratch).
import { ApiError } from '../../http/errors.ts';
import { loadTarStream } from '../../shared/tar-stream.ts';

export const UPLOAD_DIR = '/tmp/uploads';

export interface Upload {
  name: string;
  data: Buffer;
}

/**
 * The file name without any directory part: only the last segment of `a/b`, `..\\c` or
 * `../../etc/passwd` is kept, so nothing is written outside /tmp/uploads. Control characters are
 * dropped; a name that is empty, `.` or `..` afterwards is refused.
 */
export function sanitizeUploadName(raw: string): string {
  const base = (raw.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (!base || base === '.' || base === '..') throw ApiError.invalid('file', `"${raw}" is not a usable file name`);
  if (Buffer.byteLength(base) > 255) throw ApiError.invalid('file', 'the file name is longer than 255 bytes');
  return base;
}

/** Tar of `tmp/uploads/<name>…`, with the directories as the platform's containers have them. */
export async function uploadsArchive(files: Upload[], now: Date): Promise<Buffer> {
  const { pack } = await loadTarStream();
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c) => void chunks.push(c as Buffer));
  const done = new Promise<void>((ok, fail) => {
    tar.on('end', ok);
    tar.on('error', fail);
  });
  tar.entry({ name: 'tmp/', type: 'directory', mode: 0o1777, mtime: now });
  tar.entry({ name: 'tmp/uploads/', type: 'directory', mode: 0o777, mtime: now });
  for (const f of files) tar.entry({ name: `tmp/uploads/${f.name}`, mode: 0o644, mtime: now }, f.data);
  tar.finalize();
  await done;
  return Buffer.concat(chunks);
}

/**
 * The `file` fields of a multipart body already parsed by Hono (`parseBody({ all: true })`).
 * The CLI posts one file per request (directories as `<dir>.tar.gz`); several are accepted.
 */
export async function filesOf(body: Record<string, unknown>, maxBytes: number): Promise<Upload[]> {
  const field = body.file;
  const list = (Array.isArray(field) ? field : field === undefined ? [] : [field]) as unknown[];
  if (!list.length)
    throw ApiError.invalid('file', 'missing field: post the file as multipart/form-data in the field "file"');
  const out: Upload[] = [];
  for (const f of list) {
    if (!(f instanceof File)) throw ApiError.invalid('file', 'must be a file (multipart part with a filename)');
    if (f.size > maxBytes) throw ApiError.payloadTooLarge(maxBytes);
    out.push({ name: sanitizeUploadName(f.name), data: Buffer.from(await f.arrayBuffer()) });
  }
  return out;
}
