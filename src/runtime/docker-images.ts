// Images of the Docker runtime: the base image, builds (with the labels and a generated Dockerfile),
// imports, commits, and what an image says (its command, its labels).

import { join } from 'node:path';
import type Docker from 'dockerode';
import { labelledDockerfile, readSmall } from './build-labels.ts';
import { isStatus } from './docker-errors.ts';
import { type BaseImage, imageArchive } from './image-archive.ts';
import { pullImage } from './image-pull.ts';
import { ensureBusyboxImage, followBuild, packDirectory } from './images.ts';
import { type ContainerRuntime } from './runtime.ts';

type Images = Pick<
  ContainerRuntime,
  | 'ensureBaseImage'
  | 'buildImage'
  | 'imageExists'
  | 'removeImage'
  | 'imageCommand'
  | 'imageLabels'
  | 'importImage'
  | 'pullImage'
  | 'commit'
  | 'layerImage'
>;

const GENERATED_DOCKERFILE = '.scalingo-emulator.Dockerfile';

/** The code's .dockerignore (when it has one) plus the generated Dockerfile, and the file itself when the code had none. */
async function ignoringGenerated(contextDir: string): Promise<string> {
  const own = await readSmall(join(contextDir, '.dockerignore'));
  return own === null ? `${GENERATED_DOCKERFILE}\n.dockerignore\n` : `${own}\n${GENERATED_DOCKERFILE}\n`;
}

export function dockerImages(engine: () => Promise<Docker>): Images {
  let containerdStore: Promise<boolean> | undefined;
  return {
    async ensureBaseImage(tag) {
      const docker = await engine();
      await ensureBusyboxImage(docker, tag);
    },

    async buildImage({ contextDir, dockerfile, tag, labels, network, onLine }) {
      const docker = await engine();
      // The labels as one instruction of the Dockerfile when they can be (one build step, not one per label).
      const labelled = await labelledDockerfile(contextDir, dockerfile, labels);
      const file = labelled ?? dockerfile;
      // A Dockerfile the emulator wrote (the code has none) goes under a name of its own, left out of what `COPY`
      // copies by a .dockerignore line, so that the app's /app holds only the code (the engine still reads both).
      const extra: Record<string, string> = !file
        ? {}
        : dockerfile !== undefined
          ? { [GENERATED_DOCKERFILE]: file, '.dockerignore': await ignoringGenerated(contextDir) }
          : { Dockerfile: file };
      const tar = await packDirectory(contextDir, extra);
      const stream = await docker.buildImage(tar as unknown as NodeJS.ReadableStream, {
        t: tag,
        ...(dockerfile !== undefined ? { dockerfile: GENERATED_DOCKERFILE } : {}),
        ...(labelled ? {} : { labels }),
        forcerm: true,
        ...(network ? { networkmode: network } : {}),
      });
      await followBuild(docker, stream, onLine);
    },

    async imageExists(tag) {
      const docker = await engine();
      try {
        await docker.getImage(tag).inspect();
        return true;
      } catch {
        return false;
      }
    },

    async removeImage(tag) {
      const docker = await engine();
      try {
        await docker.getImage(tag).remove({ force: true });
      } catch (err) {
        if (!isStatus(err, 404, 409)) throw err;
      }
    },

    async imageCommand(tag) {
      const docker = await engine();
      const img = await docker.getImage(tag).inspect();
      return [...(img.Config.Entrypoint ?? []), ...(img.Config.Cmd ?? [])].join(' ');
    },

    async imageLabels(tag) {
      const docker = await engine();
      try {
        return (await docker.getImage(tag).inspect()).Config.Labels ?? {};
      } catch (err) {
        if (isStatus(err, 404)) return null;
        throw err;
      }
    },

    async importImage({ tarPath, tag, changes }) {
      const docker = await engine();
      const [repo, version] = splitTag(tag);
      const stream = (await docker.importImage(tarPath, {
        repo,
        tag: version,
        changes,
      })) as unknown as NodeJS.ReadableStream;
      await followBuild(docker, stream);
    },

    async pullImage(ref, onLine) {
      return pullImage(await engine(), ref, onLine);
    },

    async commit(engineId, { tag, changes }) {
      const docker = await engine();
      const [repo, version] = splitTag(tag);
      await docker.getContainer(engineId).commit({ repo, tag: version, changes });
    },

    async layerImage({ base, ...spec }) {
      const docker = await engine();
      containerdStore ??= usesContainerdStore(docker);
      containerdStore.catch(() => (containerdStore = undefined));
      if (await containerdStore) return false;
      const archive = imageArchive({ ...spec, base: await baseImage(docker, base) });
      try {
        const stream = (await docker.loadImage(archive, { quiet: true })) as unknown as NodeJS.ReadableStream;
        await followBuild(docker, stream);
      } finally {
        archive.destroy();
      }
      return true;
    },
  };
}

/**
 * Docker Engine's containerd image store (`driver-type io.containerd.snapshotter.v1` in `docker info`,
 * Docker Desktop's default in its newer versions) wants every layer's blob in a loaded archive: there,
 * layerImage leaves the image to the commit path.
 */
export async function usesContainerdStore(docker: Pick<Docker, 'info'>): Promise<boolean> {
  const info = (await docker.info()) as { DriverStatus?: Array<[string, string]> | null };
  return (info.DriverStatus ?? []).some(([k, v]) => k === 'driver-type' && /containerd\.snapshotter/.test(v));
}

/** What a new image takes from its base, from the engine's inspect and history of it. */
async function baseImage(docker: Docker, tag: string): Promise<BaseImage> {
  const image = docker.getImage(tag);
  const [inspect, history] = await Promise.all([
    image.inspect(),
    image.history() as Promise<Array<{ Created: number; CreatedBy: string; Comment: string; Size: number }>>,
  ]);
  const diffIds = inspect.RootFS.Layers ?? [];
  // The engine lists it newest first; the config has it oldest first, an entry without a layer marked so.
  const entries = [...history].reverse().map((h) => ({
    created: new Date(h.Created * 1000).toISOString(),
    created_by: h.CreatedBy,
    ...(h.Comment ? { comment: h.Comment } : {}),
    ...(h.Size === 0 ? { empty_layer: true } : {}),
  }));
  // A history that does not match the layers one for one (an empty layer of size 0) is left out: not required.
  const withLayers = entries.filter((e) => !e.empty_layer).length;
  return {
    architecture: inspect.Architecture,
    os: inspect.Os,
    ...((inspect as { Variant?: string }).Variant ? { variant: (inspect as { Variant?: string }).Variant } : {}),
    config: inspect.Config as unknown as Record<string, unknown>,
    diffIds,
    history: withLayers === diffIds.length ? entries : [],
  };
}

/** `repo:tag` → [repo, tag]; a port in the repository part (`host:5000/x`) is not a tag. */
function splitTag(tag: string): [string, string] {
  const i = tag.lastIndexOf(':');
  return i > tag.lastIndexOf('/') ? [tag.slice(0, i), tag.slice(i + 1)] : [tag, 'latest'];
}
