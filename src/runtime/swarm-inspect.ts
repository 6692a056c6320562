// A service as the swarm runtime shows it: one container (ContainerInfo), from the service, its newest
// task and that task's container on the node running it; its port is the door that follows the task.

import { EngineUnavailableError } from './errors.ts';
import { type Address } from './reach.ts';
import { type ContainerInfo } from './runtime.ts';
import { type createServiceDoors, type DoorTarget } from './swarm-forward.ts';
import { type SwarmNodes } from './swarm-nodes.ts';
import { newestTask, type SwarmService, serviceInfo, taskPort } from './swarm-services.ts';
import { type SwarmTasks } from './swarm-tasks.ts';

export function createServiceInspector(o: {
  nodes: SwarmNodes;
  tasks: SwarmTasks;
  doors: ReturnType<typeof createServiceDoors>;
  /** Where the manager's published ports are reached. */
  managerHost: string;
  /** The runtime's addressOf: a door's port on publishHost. */
  addressOf: (c: { engineId: string; port: number }) => Address;
}) {
  const { nodes, tasks, doors, managerHost } = o;

  async function inspectService(s: SwarmService): Promise<ContainerInfo> {
    const t = newestTask(await tasks.tasks(s.ID));
    const base = serviceInfo(s, t);
    const cid = t?.Status.ContainerStatus?.ContainerID;
    if (!t || !cid) return base;
    // A node out of reach (lost): what the manager knows of the task, until Swarm or the node watch moves it.
    const c = await nodes
      .engineOf(t.NodeID)
      .then(({ engine }) => engine.inspect(cid))
      .catch((err) => (err instanceof EngineUnavailableError ? null : Promise.reject(err)));
    if (!c) return base;
    const published = c.state === 'running' && (s.Spec.EndpointSpec?.Ports?.length ?? 0) > 0;
    const hostPort = published ? await doors.portOf(s.ID, () => whereRuns(s.ID)) : null;
    return {
      ...base,
      state: c.state,
      exitCode: c.exitCode,
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
      oomKilled: c.oomKilled,
      hostPort,
      address: hostPort !== null ? o.addressOf({ engineId: s.ID, port: hostPort }) : null,
    };
  }

  /** Where the service's task publishes its port now: the door of the service pipes there. */
  async function whereRuns(serviceId: string): Promise<DoorTarget | null> {
    const t = newestTask(await tasks.tasks(serviceId));
    if (t?.Status.State !== 'running') return null;
    const { node, engine } = await nodes.engineOf(t.NodeID);
    const port = taskPort(t) ?? (await engine.inspect(t.Status.ContainerStatus?.ContainerID ?? ''))?.hostPort ?? null;
    if (port === null) return null;
    return { host: node.manager ? managerHost : node.addr, port };
  }

  return inspectService;
}
