import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { type AddToLayer, addEntry, type LayerFileHeader } from '../../runtime/image-archive.ts';
import { loadTarStream } from '../../shared/tar-stream.ts';

// Registry tarballs (gzip, every file under `package/`) turned into the entries of an image's files as
// they are read: gunzipped and re-pathed on the host, never extracted there (the host writes nothing).
// Parts go in the order given, each as soon as its tarball is there: a small one fetched first goes on
// while a large one still downloads. The entries go to a layer the engine loads (`registryEntries`, given
// to the runtime's layerImage) or into one tar stream for a container's putArchive (`registryArchive`).

/** What a caller keeps (`keep`) is a manifest, not a binary: larger entries are not kept. */
const MAX_KEPT = 1024 * 1024;
const TYPES = new Set(['file', 'directory', 'symlink', 'link']);

export interface RegistryPart {
  /** The registry's tarball, once fetched. */
  tarball: Promise<string>;
  /**
   * Where a file of the package (its path under `package/`) goes in the archive (no leading slash),
   * or null to leave it out.
   */
  place: (path: string) => string | null;
}

/**
 * Every file of the parts, re-pathed, to `add` one after the other; resolves the contents of the paths
 * asked for in `keep` (a manifest among the files). Only files, directories and links: a hard link inside
 * the package keeps its target's place.
 */
export async function registryEntries(
  parts: RegistryPart[],
  keep: string[],
  add: AddToLayer,
): Promise<Record<string, string>> {
  const { extract } = await loadTarStream();
  const texts: Record<string, string> = {};
  for (const part of parts) {
    // A failure of the consumer passes as it is; one of the tarball says which it is.
    let consumerError: unknown;
    const ex = extract();
    ex.on('entry', (header, stream, next) => {
      const name = header.name.startsWith('package/') ? part.place(header.name.slice('package/'.length)) : null;
      const type = header.type ?? '';
      const linkname =
        type === 'link'
          ? part.place((header.linkname ?? '').replace(/^package\//, ''))
          : type === 'symlink'
            ? header.linkname
            : undefined;
      if (name === null || !TYPES.has(type) || linkname === null) {
        stream.on('end', () => next());
        stream.resume();
        return;
      }
      const entry: LayerFileHeader = {
        name,
        type: type as LayerFileHeader['type'],
        mode: header.mode,
        mtime: header.mtime,
        size: header.size,
        linkname: linkname ?? undefined,
      };
      const kept = keep.includes(name) && (header.size ?? 0) <= MAX_KEPT;
      // tar-stream's entry is a streamx Readable: piped and read as Node's streams are.
      const readable = stream as unknown as Readable;
      const body: Promise<Readable | Buffer> = kept ? readAll(readable) : Promise.resolve(readable);
      body
        .then(async (b) => {
          if (Buffer.isBuffer(b)) texts[name] = b.toString('utf8');
          await add(entry, b);
        })
        .then(
          () => next(),
          (err: Error) => {
            consumerError = err;
            next(err);
          },
        );
    });
    const file = await part.tarball;
    await pipeline(createReadStream(file), createGunzip(), ex).catch((err: Error) => {
      throw consumerError ?? new Error(`${basename(file)} from the npm registry cannot be read: ${err.message}`);
    });
  }
  return texts;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c as Uint8Array));
  return Buffer.concat(chunks);
}

export interface RegistryArchive {
  /** The tar stream (uncompressed): for putArchive at `/`. */
  archive: Readable;
  /** The contents of the archive paths asked for in `keep`, once the archive is complete. */
  kept: Promise<Record<string, string>>;
}

/** The parts in one tar stream; `keep`: archive paths whose text the caller reads (a manifest among the files). */
export function registryArchive(parts: RegistryPart[], keep: string[] = []): RegistryArchive {
  const out = new PassThrough();
  const kept = (async () => {
    const { pack } = await loadTarStream();
    const tar = pack();
    const written = pipeline(tar, out);
    // Awaited at the end; a reader gone early (a refused upload) must not be an unhandled rejection meanwhile.
    written.catch(() => undefined);
    try {
      const texts = await registryEntries(parts, keep, (header, body) =>
        addEntry(tar, { ...header, uid: 0, gid: 0 }, body),
      );
      tar.finalize();
      await written;
      return texts;
    } catch (err) {
      tar.destroy(err as Error);
      out.destroy(err as Error);
      throw err;
    }
  })();
  // The archive's reader sees a failure as the stream's error; `kept` rejects with it too.
  kept.catch(() => undefined);
  return { archive: out, kept };
}
