// Services and their tasks on the swarm manager: lookups, scaling, rescheduling, and the container of a
// task on whichever node runs it. Used by swarm-runtime.ts (the ContainerRuntime) and its event relay.
import type Docker from 'dockerode';
import { isStatus } from './docker-errors.ts';
import { ConflictError, NoSuchContainerError, RuntimeError } from './errors.ts';
import { type ContainerRuntime } from './runtime.ts';
import { type SwarmNode, type SwarmNodes } from './swarm-nodes.ts';
import { pickPort, SERVICE_PORTS } from './swarm-ports.ts';
import { newestTask, type ServiceSpec, type SwarmService, type SwarmTask } from './swarm-services.ts';

const START_TIMEOUT_MS = 120_000;
const EXITED = new Set(['complete', 'failed', 'shutdown', 'rejected', 'orphaned', 'remove']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createSwarmTasks(docker: () => Promise<Docker>, nodes: SwarmNodes) {
  /** Ports being given to services not created yet (the services' own are read from the manager). */
  const choosing = new Set<number>();
  /** A host port for a new service: one no service has, free on the manager, outside Docker's range (swarm-ports.ts). */
  async function servicePort(): Promise<number> {
    const services = (await (await docker()).listServices()) as unknown as SwarmService[];
    const used = new Set([
      ...choosing,
      ...services.flatMap((x) => (x.Spec.EndpointSpec?.Ports ?? []).map((p) => p.PublishedPort ?? 0)),
    ]);
    const port = await pickPort(SERVICE_PORTS, used, '0.0.0.0');
    choosing.add(port);
    return port;
  }

  async function service(id: string): Promise<SwarmService | null> {
    try {
      return (await (await docker()).getService(id).inspect()) as SwarmService;
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  async function mustService(id: string): Promise<SwarmService> {
    const s = await service(id);
    if (!s) throw new NoSuchContainerError(id);
    return s;
  }

  async function tasks(serviceId: string): Promise<SwarmTask[]> {
    return (await (await docker()).listTasks({ filters: JSON.stringify({ service: [serviceId] }) })) as SwarmTask[];
  }

  async function update(s: SwarmService, change: (spec: ServiceSpec) => void): Promise<void> {
    const spec = structuredClone(s.Spec);
    change(spec);
    await (await docker()).getService(s.ID).update({ version: s.Version.Index, ...spec });
  }

  /** A new task for the service: scaled up from 0, or forced (the previous task exited or its node left). */
  async function newTask(s: SwarmService): Promise<void> {
    await update(s, (spec) => {
      if (spec.Mode.Replicated?.Replicas === 0) spec.Mode.Replicated.Replicas = 1;
      else spec.TaskTemplate.ForceUpdate = (spec.TaskTemplate.ForceUpdate ?? 0) + 1;
    });
  }

  /** Waits until a task other than `previous` runs (or already ended); fails with Swarm's reason at the deadline. */
  async function untilStarted(id: string, previous: string | null): Promise<SwarmTask> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let last: SwarmTask | null = null;
    for (;;) {
      last = newestTask(await tasks(id));
      if (
        last &&
        last.ID !== previous &&
        last.Status.ContainerStatus?.ContainerID &&
        (last.Status.State === 'running' || EXITED.has(last.Status.State))
      )
        return last;
      if (Date.now() > deadline) {
        const why = last ? `${last.Status.State}${last.Status.Err ? `: ${last.Status.Err}` : ''}` : 'no task';
        throw new RuntimeError(
          `service ${id} did not start within ${START_TIMEOUT_MS / 1000} s (${why})`,
          'SWARM_TASK_NOT_STARTED',
        );
      }
      if (!(await service(id))) throw new NoSuchContainerError(id);
      await sleep(200);
    }
  }

  /** The container of the service's newest task and the engine of its node, or null when it has none yet. */
  async function container(
    id: string,
  ): Promise<{ s: SwarmService; task: SwarmTask; cid: string; node: SwarmNode; engine: ContainerRuntime } | null> {
    const s = await mustService(id);
    const task = newestTask(await tasks(id));
    const cid = task?.Status.ContainerStatus?.ContainerID;
    if (!task || !cid) return null;
    const { node, engine } = await nodes.engineOf(task.NodeID);
    return { s, task, cid, node, engine };
  }

  /** Like container(), for calls that need one: a service not started yet refuses as a created container does. */
  async function mustContainer(id: string) {
    const c = await container(id);
    if (!c) throw new ConflictError(`container ${id} is not running (its service has no task yet)`);
    return c;
  }

  /** Waits for the container of the service's newest task (a service created without start gets one when started). */
  async function awaitContainer(id: string) {
    for (;;) {
      const c = await container(id);
      if (c) return c;
      await sleep(500);
    }
  }

  /**
   * Gives a new task to every service whose newest task is on a node drained or lost: Swarm shuts those
   * tasks down but, under restart condition `none`, never replaces them. Returns the services rescheduled.
   */
  async function reschedule(labelFilter: string, handled: Set<string>): Promise<string[]> {
    const gone = new Set(nodes.list.filter((n) => n.availability !== 'active' || n.state !== 'ready').map((n) => n.id));
    if (!gone.size) return [];
    const d = await docker();
    const services = (await d.listServices({
      filters: JSON.stringify({ label: [labelFilter] }),
    })) as unknown as SwarmService[];
    const moved: string[] = [];
    for (const s of services) {
      if (!s.Spec.Mode.Replicated?.Replicas) continue;
      const t = newestTask(await tasks(s.ID));
      if (!t?.NodeID || !gone.has(t.NodeID) || handled.has(t.ID)) continue;
      if (t.Status.State === 'complete' || t.Status.State === 'failed') continue; // it had ended: the emulator's to restart
      handled.add(t.ID);
      // A service removed meanwhile (the app scaled down, deleted) has nothing to move.
      if (
        await newTask(s).then(
          () => true,
          (err) => (isStatus(err, 404) ? false : Promise.reject(err)),
        )
      )
        moved.push(s.ID);
    }
    return moved;
  }

  return {
    servicePort,
    portChosen: (port: number) => void choosing.delete(port),
    service,
    mustService,
    tasks,
    update,
    newTask,
    untilStarted,
    container,
    mustContainer,
    awaitContainer,
    reschedule,
  };
}

export type SwarmTasks = ReturnType<typeof createSwarmTasks>;
