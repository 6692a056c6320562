// Images, networks, volumes and exec of the Docker runtime: the part of ContainerRuntime that is not
// about a container's life (docker-runtime.ts spreads these into the runtime and guards them alike).
import type Docker from 'dockerode';
import { type Duplex, PassThrough, type Readable } from 'node:stream';
import type { ContainerRuntime } from './runtime.ts';
import { LABELS } from './runtime.ts';
import { ensureBusyboxImage, followBuild, packDirectory } from './images.ts';
import { pullImage } from './image-pull.ts';

import { isStatus } from './docker-errors.ts';
import { labelledDockerfile, readSmall } from './build-labels.ts';
import { join } from 'node:path';

type Resources = Pick<
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
  | 'ensureNetwork'
  | 'removeNetwork'
  | 'removeVolume'
  | 'networkLabels'
  | 'volumeLabels'
  | 'updateMemory'
  | 'exec'
  | 'execStream'
>;

const GENERATED_DOCKERFILE = '.scalingo-emulator.Dockerfile';

/** The code's .dockerignore (when it has one) plus the generated Dockerfile, and the file itself when the code had none. */
async function ignoringGenerated(contextDir: string): Promise<string> {
  const own = await readSmall(join(contextDir, '.dockerignore'));
  return own === null ? `${GENERATED_DOCKERFILE}\n.dockerignore\n` : `${own}\n${GENERATED_DOCKERFILE}\n`;
}

export function dockerResources(engine: () => Promise<Docker>): Resources {
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

    async ensureNetwork(name, labels) {
      const docker = await engine();
      try {
        await docker.getNetwork(name).inspect();
        return;
      } catch (err) {
        if (!isStatus(err, 404)) throw err;
      }
      try {
        await docker.createNetwork({
          Name: name,
          Driver: 'bridge',
          CheckDuplicate: true,
          Labels: { ...labels, [LABELS.managed]: '1' },
        });
      } catch (err) {
        if (!isStatus(err, 409)) throw err;
      }
    },

    async removeNetwork(name) {
      const docker = await engine();
      try {
        await docker.getNetwork(name).remove();
      } catch (err) {
        if (!isStatus(err, 404)) throw err;
      }
    },

    async removeVolume(name) {
      const docker = await engine();
      try {
        await docker.getVolume(name).remove({ force: true });
      } catch (err) {
        if (!isStatus(err, 404)) throw err;
      }
    },

    async networkLabels(name) {
      const docker = await engine();
      try {
        return ((await docker.getNetwork(name).inspect()) as Docker.NetworkInspectInfo).Labels ?? {};
      } catch (err) {
        if (isStatus(err, 404)) return null;
        throw err;
      }
    },

    async volumeLabels(name) {
      const docker = await engine();
      try {
        return (await docker.getVolume(name).inspect()).Labels ?? {};
      } catch (err) {
        if (isStatus(err, 404)) return null;
        throw err;
      }
    },

    async updateMemory(engineId, memoryBytes) {
      const docker = await engine();
      await docker.getContainer(engineId).update({ Memory: memoryBytes, MemorySwap: memoryBytes });
    },

    async exec(engineId, cmd, o = {}) {
      const { stdout, stderr, exitCode } = await startExec(await engine(), engineId, cmd, o);
      const max = o.maxBytes ?? 1024 * 1024;
      const collect = (s: Readable) =>
        new Promise<string>((resolve) => {
          let buf = '';
          s.on('data', (c: Buffer) => {
            if (buf.length < max) buf += c.toString('utf8').slice(0, max - buf.length);
          });
          s.on('end', () => resolve(buf));
          s.on('error', () => resolve(buf));
        });
      const [out, err] = await Promise.all([collect(stdout), collect(stderr)]);
      return { exitCode: await exitCode, stdout: out, stderr: err };
    },

    async execStream(engineId, cmd, o = {}) {
      const { stdout, stderr, exitCode } = await startExec(await engine(), engineId, cmd, o);
      stderr.resume();
      return { stdout, exitCode };
    },
  };
}

/** `repo:tag` → [repo, tag]; a port in the repository part (`host:5000/x`) is not a tag. */
function splitTag(tag: string): [string, string] {
  const i = tag.lastIndexOf(':');
  return i > tag.lastIndexOf('/') ? [tag.slice(0, i), tag.slice(i + 1)] : [tag, 'latest'];
}

/** Starts an exec; stdout and stderr are demultiplexed into two streams that end with it. */
async function startExec(
  docker: Docker,
  engineId: string,
  cmd: string[],
  o: { user?: string; env?: Record<string, string>; stdin?: Readable },
) {
  const env = o.env ? Object.entries(o.env).map(([k, v]) => `${k}=${v}`) : undefined;
  const exec = await docker
    .getContainer(engineId)
    .exec({ Cmd: cmd, AttachStdin: !!o.stdin, AttachStdout: true, AttachStderr: true, User: o.user, Env: env });
  const raw = (await exec.start({ hijack: true, stdin: !!o.stdin })) as unknown as Duplex;
  const input = o.stdin;
  if (input) {
    // The hijacked connection carries stdin raw (not multiplexed): piped, then half-closed at the input's end, which
    // closes the command's stdin. A command that exits before reading it all ends the output: the input is dropped.
    input.on('error', () => raw.destroy());
    raw.on('close', () => input.destroy());
    input.pipe(raw);
  }
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  docker.modem.demuxStream(raw, stdout, stderr);
  const ended = new Promise<void>((resolve) => {
    raw.on('end', resolve);
    raw.on('close', resolve);
    raw.on('error', () => resolve());
  });
  void ended.then(() => {
    stdout.end();
    stderr.end();
    // The output is over: a half-open connection still writing the rest of an unread input would stay open.
    if (o.stdin && !o.stdin.readableEnded) raw.destroy();
  });
  const exitCode = ended.then(async () => (await exec.inspect()).ExitCode ?? -1);
  return { stdout, stderr, exitCode };
}
