import { createReadStream } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { loadTarStream } from '../../shared/tar-stream.ts';

// Registry tarballs (gzip, every file under `package/`) turned into one tar stream for the engine as
// they are read: gunzipped and re-pathed on the host, never extracted there (the host writes nothing),
// the engine unpacking the result while the host still reads. Parts go in the order given, each as soon
// as its tarball is there: a small one fetched first is unpacked while a large one still downloads.

/** What a caller keeps (`keep`) is a manifest, not a binary: larger entries are not kept. */
const MAX_KEPT = 1024 * 1024;

export interface RegistryPart {
  /** The registry's tarball, once fetched. */
  tarball: Promise<string>;
  /**
   * Where a file of the package (its path under `package/`) goes in the archive (no leading slash),
   * or null to leave it out.
   */
  place: (path: string) => string | null;
}

export interface RegistryArchive {
  /** The tar stream (uncompressed): for putArchive at `/`. */
  archive: Readable;
  /** The contents of the archive paths asked for in `keep`, once the archive is complete. */
  kept: Promise<Record<string, string>>;
}

/** The parts in one archive; `keep`: archive paths whose text the caller reads (a manifest among the files). */
export function registryArchive(parts: RegistryPart[], keep: string[] = []): RegistryArchive {
  const out = new PassThrough();
  const kept = (async () => {
    const { extract, pack } = await loadTarStream();
    const tar = pack();
    const texts: Record<string, string> = {};
    const written = pipeline(tar, out);
    // Awaited at the end; a reader gone early (a refused upload) must not be an unhandled rejection meanwhile.
    written.catch(() => undefined);
    try {
      for (const part of parts) {
        const ex = extract();
        ex.on('entry', (header, stream, next) => {
          const inPackage = header.name.replace(/^package\//, '');
          const name = header.name.startsWith('package/') ? part.place(inPackage) : null;
          // Only files, directories and symbolic links: a link inside the package keeps its target's place.
          const type = header.type;
          const linkname =
            type === 'link'
              ? part.place((header.linkname ?? '').replace(/^package\//, ''))
              : type === 'symlink'
                ? header.linkname
                : undefined;
          if (name === null || !['file', 'directory', 'symlink', 'link'].includes(type ?? '') || linkname === null) {
            stream.on('end', () => next());
            stream.resume();
            return;
          }
          const entry = tar.entry(
            {
              name,
              type,
              mode: header.mode,
              mtime: header.mtime,
              size: header.size,
              linkname: linkname ?? undefined,
              uid: 0,
              gid: 0,
            },
            (err) => next(err ?? undefined),
          );
          if (keep.includes(name) && (header.size ?? 0) <= MAX_KEPT) {
            const chunks: Buffer[] = [];
            stream.on('data', (c) => chunks.push(Buffer.from(c as Uint8Array)));
            stream.on('end', () => {
              texts[name] = Buffer.concat(chunks).toString('utf8');
            });
          }
          stream.pipe(entry);
        });
        await pipeline(createReadStream(await part.tarball), createGunzip(), ex);
      }
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
