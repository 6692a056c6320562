// Networks and volumes of the Docker runtime, and a container's memory limit changed in place. Images:
// docker-images.ts; exec: docker-exec.ts (docker-runtime.ts spreads these into the runtime and guards them alike).
import type Docker from 'dockerode';
import { isStatus } from './docker-errors.ts';
import { type ContainerRuntime, LABELS } from './runtime.ts';

type Resources = Pick<
  ContainerRuntime,
  'ensureNetwork' | 'removeNetwork' | 'removeVolume' | 'networkLabels' | 'volumeLabels' | 'updateMemory'
>;

export function dockerResources(engine: () => Promise<Docker>): Resources {
  return {
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
  };
}
