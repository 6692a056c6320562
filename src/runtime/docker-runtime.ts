// The one implementation of ContainerRuntime over dockerode, put together from its parts: the
// connection (docker-connection.ts), containers (docker-containers.ts), their streams
// (docker-container-io.ts), images (docker-images.ts), exec (docker-exec.ts), networks and volumes
// (docker-resources.ts), and the engine's events (docker-events.ts). Every engine call of the parts is guarded here alike.

import { connectDocker, type DockerRuntimeOptions } from './docker-connection.ts';
import { dockerContainerIo } from './docker-container-io.ts';
import { dockerContainers } from './docker-containers.ts';
import { CONTAINER_CALLS, guardEngineCalls } from './docker-errors.ts';
import { dockerEvents } from './docker-events.ts';
import { dockerExec } from './docker-exec.ts';
import { dockerImages } from './docker-images.ts';
import { dockerResources } from './docker-resources.ts';
import { EngineUnavailableError } from './errors.ts';
import { addressOf, reachOf } from './reach.ts';
import { type ContainerRuntime } from './runtime.ts';

export type { DockerRuntimeOptions } from './docker-connection.ts';

/** The one implementation of ContainerRuntime, over dockerode. Throws at once when the endpoint is misconfigured. */
export function createDockerRuntime(opts: DockerRuntimeOptions = {}): ContainerRuntime {
  const { engine, health, publishHost, where, probe } = connectDocker(opts);
  const events = dockerEvents(engine, health);
  const reach = reachOf({ publishHost, network: opts.network });

  const runtime: ContainerRuntime = {
    publishHost,
    addressOf: (c) => addressOf(reach, c),
    probe,
    available: () => health.available(),
    onEngine: (listener) => health.onChange(listener),
    ...dockerImages(engine),
    // Networks, volumes, the memory limit: docker-resources.ts.
    ...dockerResources(engine),
    ...dockerExec(engine),
    ...dockerContainers(engine, reach),
    ...dockerContainerIo(engine, health),
    onEvent: events.onEvent,

    async close() {
      events.close();
      health.close();
    },
  };

  // Every engine call reports to the engine state, and its failures become typed errors (docker-errors.ts).
  guardEngineCalls(
    runtime,
    [
      ...CONTAINER_CALLS,
      'ensureBaseImage',
      'buildImage',
      'removeImage',
      'imageCommand',
      'imageLabels',
      'importImage',
      'layerImage',
      'pullImage',
      'removeNetwork',
      'removeVolume',
      'networkLabels',
      'volumeLabels',
    ],
    where,
    {
      ok: () => health.noteOk(),
      failed: (typed) => {
        if (typed instanceof EngineUnavailableError) health.noteError(typed);
      },
    },
  );

  return runtime;
}

export { describeDockerError } from './docker-errors.ts';
