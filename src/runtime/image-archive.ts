import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, type Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { loadTarStream } from '../shared/tar-stream.ts';

// A docker-archive (what `docker save` writes and `docker load` reads) of one new image made on the fly:
// the new layers' tars, a config JSON and manifest.json. The base image's layers are named in the manifest
// but not in the archive: the classic image store skips a layer it already has by chain ID
// (moby image/tarexport/load.go), so only the new files travel, and the engine writes them once into
// their layer (a container's putArchive then `docker commit` writes them into the container, reads them
// back as a tar and writes them again). An entry of a tar needs its size before its bytes, and a layer's
// diff ID (its sha256) goes into the config: a large file is a layer of its own, streamed (its size is in
// its header); the other files gather in a layer held in memory, bounded, that goes once complete.

/** A file at least this large is a layer of its own, streamed: only smaller files are held in memory. */
const OWN_LAYER_MIN = 4 * 1024 * 1024;
/** The held layer goes into the archive once this large, and another one starts. */
const HELD_LAYER_MAX = 32 * 1024 * 1024;
/** tar-stream writes a plain 512-byte header for a name this short (longer ones may take a PAX header). */
const PLAIN_HEADER_NAME_MAX = 100;

export interface LayerFileHeader {
  /** The path in the image, without a leading slash. */
  name: string;
  type: 'file' | 'directory' | 'symlink' | 'link';
  mode?: number;
  mtime?: Date;
  /** A file's size (required with a stream body). */
  size?: number;
  linkname?: string;
}

/** Adds one entry to the new layers; resolves once it is written (or held). */
export type AddToLayer = (header: LayerFileHeader, body?: Readable | Buffer) => Promise<void>;

/** What the new image takes from its base: the engine's inspect of it. */
export interface BaseImage {
  architecture: string;
  os: string;
  variant?: string;
  /** The base's container configuration (Env, Cmd, WorkingDir, Labels…), as the engine inspects it. */
  config: Record<string, unknown>;
  /** Its layers' diff IDs (`sha256:…`), bottom first. */
  diffIds: string[];
  /** Its history, oldest first, in the image config's shape. */
  history: Array<Record<string, unknown>>;
}

/** The new image over a base: its tag, its changes over the base, its new files. */
export interface NewLayers {
  /** `repo:tag` the engine gives the loaded image. */
  tag: string;
  workingDir?: string;
  cmd?: string[];
  /** Added to the base's labels. */
  labels: Record<string, string>;
  /** What the history says made the new layers. */
  createdBy: string;
  /** Writes the new files; the archive is complete once it resolves. */
  fill: (add: AddToLayer) => Promise<void>;
}

export interface ImageArchiveSpec extends NewLayers {
  base: BaseImage;
}

/**
 * The archive as a stream for the engine's load; it errors (and the engine's load with it) when `fill`
 * fails or a stream body does not give the size its header said.
 */
export function imageArchive(spec: ImageArchiveSpec): Readable {
  const passing = new PassThrough();
  void writeArchive(spec, passing).catch((err: unknown) =>
    passing.destroy(err instanceof Error ? err : new Error(String(err))),
  );
  return passing;
}

async function writeArchive(spec: ImageArchiveSpec, out: Writable): Promise<void> {
  const { pack } = await loadTarStream();
  const outer = pack();
  const written = pipeline(outer, out);
  written.catch(() => undefined);
  const diffIds: string[] = [];
  const names: string[] = [];
  const nextName = () => `layer-${names.length}/layer.tar`;

  /** One outer entry of `size` bytes fed by `feed`; its sha256 is the layer's diff ID. */
  async function layer(size: number, feed: (into: Writable) => Promise<void>): Promise<void> {
    const name = nextName();
    const hash = createHash('sha256');
    const tap = new Transform({
      transform(c: Buffer, _e, cb) {
        hash.update(c);
        cb(null, c);
      },
    });
    // The entry's callback says whether it got the size announced (tar-stream: "size mismatch").
    let entry: ReturnType<typeof outer.entry> | undefined;
    const complete = new Promise<void>((resolve, reject) => {
      entry = outer.entry({ name, size }, (err) => (err ? reject(err) : resolve()));
    });
    if (!entry) throw new Error('tar-stream gave no entry');
    await Promise.all([pipeline(tap, entry), feed(tap), complete]);
    names.push(name);
    diffIds.push(`sha256:${hash.digest('hex')}`);
  }

  let held = await heldLayer();
  const flushHeld = async () => {
    if (!held.count) return;
    const { chunks, bytes } = await held.close();
    await layer(bytes, async (into) => {
      for (const c of chunks) if (!into.write(c)) await once(into, 'drain');
      into.end();
    });
    held = await heldLayer();
  };

  await spec.fill(async (header, body) => {
    const size = header.size ?? (Buffer.isBuffer(body) ? body.length : 0);
    if (
      header.type === 'file' &&
      body &&
      !Buffer.isBuffer(body) &&
      size >= OWN_LAYER_MIN &&
      header.name.length <= PLAIN_HEADER_NAME_MAX
    ) {
      // A tar of this one file: header, data padded to 512, the 1024-byte end.
      const tarSize = 512 + Math.ceil(size / 512) * 512 + 1024;
      await layer(tarSize, async (into) => {
        const single = pack();
        const fed = pipeline(single, into);
        fed.catch(() => undefined);
        await addEntry(single, { ...header, size }, body).catch((err: Error) => {
          single.destroy(err);
          throw err;
        });
        single.finalize();
        await fed;
      });
      return;
    }
    await held.add(header, body);
    if (held.bytes >= HELD_LAYER_MAX) await flushHeld();
  });
  await flushHeld();

  const now = new Date().toISOString();
  const baseLayers = spec.base.diffIds.map((_, i) => `base-${i}/layer.tar`);
  const config = {
    architecture: spec.base.architecture,
    os: spec.base.os,
    ...(spec.base.variant ? { variant: spec.base.variant } : {}),
    created: now,
    config: {
      ...spec.base.config,
      ...(spec.workingDir ? { WorkingDir: spec.workingDir } : {}),
      ...(spec.cmd ? { Cmd: spec.cmd } : {}),
      Labels: { ...((spec.base.config.Labels as Record<string, string> | null) ?? {}), ...spec.labels },
    },
    rootfs: { type: 'layers', diff_ids: [...spec.base.diffIds, ...diffIds] },
    history: [...spec.base.history, ...diffIds.map(() => ({ created: now, created_by: spec.createdBy }))],
  };
  const configJson = Buffer.from(JSON.stringify(config));
  const configName = `${createHash('sha256').update(configJson).digest('hex')}.json`;
  const manifest = [{ Config: configName, RepoTags: [spec.tag], Layers: [...baseLayers, ...names] }];
  outer.entry({ name: configName }, configJson);
  outer.entry({ name: 'manifest.json' }, Buffer.from(JSON.stringify(manifest)));
  outer.finalize();
  await written;
}

interface HeldLayer {
  count: number;
  bytes: number;
  add: AddToLayer;
  close(): Promise<{ chunks: Buffer[]; bytes: number }>;
}

/** A layer's tar made in memory (the files below OWN_LAYER_MIN). */
async function heldLayer(): Promise<HeldLayer> {
  const { pack } = await loadTarStream();
  const tar = pack();
  const chunks: Buffer[] = [];
  const ended = once(tar, 'end');
  const state: HeldLayer = {
    count: 0,
    bytes: 0,
    async add(header, body) {
      state.count++;
      await addEntry(tar, header, body);
    },
    async close() {
      tar.finalize();
      await ended;
      return { chunks, bytes: state.bytes };
    },
  };
  tar.on('data', (c: unknown) => {
    chunks.push(c as Buffer);
    state.bytes += (c as Buffer).length;
  });
  return state;
}

type TarPack = ReturnType<Awaited<ReturnType<typeof loadTarStream>>['pack']>;

/** One entry into a tar-stream pack; resolves once written, rejects with the entry's failure (a size mismatch). */
export function addEntry(
  tar: TarPack,
  header: LayerFileHeader & { uid?: number; gid?: number },
  body?: Readable | Buffer,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error | null) => (err ? reject(err) : resolve());
    if (!body || Buffer.isBuffer(body)) {
      tar.entry(header, body ?? Buffer.alloc(0), done);
      return;
    }
    const sink = tar.entry(header, done);
    // Its failure is `done`'s to report; the body's ends the entry.
    sink.on('error', () => undefined);
    body.on('error', (err) => sink.destroy(err));
    body.pipe(sink as unknown as NodeJS.WritableStream);
  });
}
