// The Docker runtime's container streams: logs (docker-logs.ts), stats, attach and its terminal size,
// and files put into a container.

import { type Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { isStatus } from './docker-errors.ts';
import { containerLogs } from './docker-logs.ts';
import { statsFromDocker } from './engine-parse.ts';
import { type EngineStateTracker } from './engine-state.ts';
import { type ContainerRuntime, type StatsSample } from './runtime.ts';

type ContainerIo = Pick<ContainerRuntime, 'logs' | 'stats' | 'attach' | 'resize' | 'putArchive'>;

export function dockerContainerIo(engine: () => Promise<Docker>, health: EngineStateTracker): ContainerIo {
  return {
    async logs(engineId, o) {
      return containerLogs((await engine()).getContainer(engineId), o, health);
    },

    async stats(engineId): Promise<StatsSample | null> {
      const docker = await engine();
      try {
        const c = docker.getContainer(engineId);
        const s = (await c.stats({ stream: false })) as unknown as Parameters<typeof statsFromDocker>[0];
        return statsFromDocker(s, 0);
      } catch (err) {
        if (isStatus(err, 404, 409)) return null;
        throw err;
      }
    },

    async attach(engineId): Promise<Duplex> {
      const docker = await engine();
      const stream = await docker
        .getContainer(engineId)
        .attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true });
      return stream as unknown as Duplex;
    },

    async resize(engineId, width, height) {
      const docker = await engine();
      await docker.getContainer(engineId).resize({ w: width, h: height });
    },

    async putArchive(engineId, dir, tar) {
      const docker = await engine();
      await docker.getContainer(engineId).putArchive(tar, { path: dir });
    },
  };
}
