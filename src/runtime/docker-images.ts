// Images of the Docker runtime: the base image, builds (with the labels and a generated Dockerfile),
// imports, commits, and what an image says (its command, its labels).

import { join } from 'node:path';
import type Docker from 'dockerode';
import { labelledDockerfile, readSmall } from './build-labels.ts';
import { isStatus } from './docker-errors.ts';
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
>;

const GENERATED_DOCKERFILE = '.scalingo-emulator.Dockerfile';

/** The code's .dockerignore (when it has one) plus the generated Dockerfile, and the file itself when the code had none. */
async function ignoringGenerated(contextDir: string): Promise<string> {
  const own = await readSmall(join(contextDir, '.dockerignore'));
  return own === null ? `${GENERATED_DOCKERFILE}\n.dockerignore\n` : `${own}\n${GENERATED_DOCKERFILE}\n`;
}

export function dockerImages(engine: () => Promise<Docker>): Images {
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
  };
}

/** `repo:tag` → [repo, tag]; a port in the repository part (`host:5000/x`) is not a tag. */
function splitTag(tag: string): [string, string] {
  const i = tag.lastIndexOf(':');
  return i > tag.lastIndexOf('/') ? [tag.slice(0, i), tag.slice(i + 1)] : [tag, 'latest'];
}
