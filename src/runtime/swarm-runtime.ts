// ContainerRuntime over Docker Swarm (docker.mode "swarm"; docs/architecture.md "Swarm"). The engine
// configured (docker.host…) must be a swarm manager. App and addon containers are services of one replica
// (swarm-services.ts), placed by Swarm on any active node; what needs a terminal or no network (one-offs,
// builds) runs as a plain container on the one-off node, joined to the app's attachable overlay network.
// Per-container calls (logs, stats, exec, attach, wait) go to the engine of the node running the task
// (swarm-nodes.ts); images stay on the manager and are copied to the nodes (nodes never pull).
// Put together from its parts: the manager (swarm-manager.ts), containers (swarm-containers.ts, shown by
// swarm-inspect.ts), where per-container calls go (swarm-placement.ts) and events (swarm-events.ts).

import { engineEndpoint, lazyEngineClient } from './docker-connection.ts';
import { CONTAINER_CALLS, guardEngineCalls } from './docker-errors.ts';
import { createDockerRuntime, type DockerRuntimeOptions } from './docker-runtime.ts';
import { addressOf } from './reach.ts';
import { type ContainerRuntime } from './runtime.ts';
import { swarmContainers } from './swarm-containers.ts';
import { createSwarmEvents } from './swarm-events.ts';
import { createServiceDoors } from './swarm-forward.ts';
import { createServiceInspector } from './swarm-inspect.ts';
import { swarmManagerHealth, swarmManagerResources } from './swarm-manager.ts';
import { createSwarmNodes } from './swarm-nodes.ts';
import { createSwarmPlacement, forwardedCalls } from './swarm-placement.ts';
import { createSwarmTasks } from './swarm-tasks.ts';

export { NOT_A_MANAGER } from './swarm-manager.ts';

export interface SwarmRuntimeOptions extends DockerRuntimeOptions {
  /** Node (hostname or id) that runs plain containers: one-offs and builds; default the manager. */
  oneOffNode?: string;
  /** How often node availability is checked for drained or lost nodes (ms). */
  watchMs?: number;
}

export function createSwarmRuntime(opts: SwarmRuntimeOptions = {}): ContainerRuntime {
  const manager = createDockerRuntime(opts);
  const { endpoint, where } = engineEndpoint(opts);
  const docker = lazyEngineClient(endpoint);
  const publishHost = manager.publishHost;
  const nodes = createSwarmNodes({ manager, managerDocker: docker, tls: opts.tls, publishHost });
  const tasks = createSwarmTasks(docker, nodes);
  const doors = createServiceDoors(publishHost);
  // Where the manager's published ports are reached: its own host for a TCP engine, else this machine.
  const managerHost = endpoint.kind === 'tcp' ? endpoint.host : '127.0.0.1';
  const placement = createSwarmPlacement({ manager, nodes, tasks, oneOffNode: opts.oneOffNode });
  // The doors listen on publishHost: a service is reached at its door's port there (reach.ts).
  const addressAt = (c: { engineId: string; port: number }) => addressOf({ kind: 'published', publishHost }, c);
  const inspectService = createServiceInspector({ nodes, tasks, doors, managerHost, addressOf: addressAt });
  const events = createSwarmEvents({
    manager,
    nodes,
    tasks,
    onTaskChange: (id) => doors.forget(id),
    watchMs: opts.watchMs ?? 2000,
  });

  const runtime: ContainerRuntime = {
    publishHost,
    addressOf: addressAt,
    ...swarmManagerHealth(manager, docker),
    ...swarmManagerResources(manager, docker, nodes),
    ...swarmContainers({ manager, docker, nodes, tasks, placement, doors, inspectService }),
    ...forwardedCalls(placement),
    onEvent: (listener) => events.onEvent(listener),

    async close() {
      events.close();
      await doors.closeAll();
      await nodes.close();
      await manager.close();
    },
  };

  // Failures of the manager's own API (services, tasks, networks) become the runtime's typed errors too.
  guardEngineCalls(runtime, CONTAINER_CALLS, where);
  return runtime;
}
