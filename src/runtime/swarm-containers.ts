// The swarm runtime's containers: app and addon containers are services of one replica (swarm-services.ts);
// what needs a terminal or no network, and builds, run as plain containers (swarm-placement.ts).
import type Docker from 'dockerode';
import { managedFilter } from './docker-containers.ts';
import { isStatus } from './docker-errors.ts';
import { EngineUnavailableError, NoSuchContainerError, NoSuchImageError } from './errors.ts';
import { readyAtAddress } from './readiness.ts';
import { type ContainerInfo, type ContainerRuntime, LABELS } from './runtime.ts';
import { type createServiceDoors } from './swarm-forward.ts';
import { type SwarmNodes } from './swarm-nodes.ts';
import { type SwarmPlacement } from './swarm-placement.ts';
import {
  isContainerId,
  newestTask,
  SWARM_LABELS,
  type SwarmService,
  serviceInfo,
  serviceSpec,
  TASK_LABELS,
} from './swarm-services.ts';
import { type SwarmTasks } from './swarm-tasks.ts';

type Containers = Pick<
  ContainerRuntime,
  'run' | 'start' | 'stop' | 'remove' | 'inspect' | 'list' | 'states' | 'ready' | 'wait' | 'updateMemory' | 'stats'
>;

export function swarmContainers(o: {
  manager: ContainerRuntime;
  docker: () => Promise<Docker>;
  nodes: SwarmNodes;
  tasks: SwarmTasks;
  placement: SwarmPlacement;
  doors: ReturnType<typeof createServiceDoors>;
  inspectService: (s: SwarmService) => Promise<ContainerInfo>;
}): Containers {
  const { manager, docker, nodes, tasks, placement, doors, inspectService } = o;
  const { engineOfPlain } = placement;

  async function list(labels: Record<string, string>): Promise<ContainerInfo[]> {
    const services = (await (
      await docker()
    ).listServices({
      filters: managedFilter(labels),
    })) as unknown as SwarmService[];
    const out = await Promise.all(services.map((s) => inspectService(s)));
    for (const e of [manager, ...(await nodes.otherEngines())]) {
      // Another node's engine out of reach: its plain containers (one-offs) are not listed meanwhile.
      const found = await e
        .list(labels)
        .catch((err) => (e !== manager && err instanceof EngineUnavailableError ? [] : Promise.reject(err)));
      for (const c of found) if (!c.labels[TASK_LABELS.serviceId]) out.push(c);
    }
    return out;
  }

  return {
    async run(spec, ro = {}) {
      const build = spec.labels[LABELS.type] === 'build';
      if (spec.tty || spec.openStdin || spec.networkNone || build) {
        // Builds (whatever their network: builds.network) stay on the manager, where their images are committed and kept.
        const engine = spec.networkNone || build ? manager : await placement.oneOffEngine();
        const info = await engine.run(spec, ro);
        placement.placed(info.engineId, engine);
        return info;
      }
      const d = await docker();
      let imageId: string;
      try {
        imageId = (await d.getImage(spec.image).inspect()).Id;
      } catch (err) {
        if (isStatus(err, 404)) throw new NoSuchImageError(spec.image, { cause: err });
        throw err;
      }
      await nodes.refresh();
      // A named volume (addon data) stays where it was made, a host path exists where it was made: pinned to the manager.
      const pinned = (spec.binds ?? []).length > 0;
      const constraints = pinned && nodes.managerId ? [`node.id==${nodes.managerId}`] : [];
      if (!pinned) await nodes.spreadImage(spec.image, imageId);
      const publishedPort = spec.publishPort ? await tasks.servicePort() : undefined;
      let created: { id?: string; ID?: string };
      try {
        const full = serviceSpec(spec, imageId, { replicas: ro.start === false ? 0 : 1, constraints, publishedPort });
        created = (await d.createService(full as unknown as Docker.CreateServiceOptions)) as {
          id?: string;
          ID?: string;
        };
      } finally {
        if (publishedPort) tasks.portChosen(publishedPort);
      }
      const id = created.id ?? created.ID ?? '';
      if (ro.start !== false) await tasks.untilStarted(id, null);
      return inspectService(await tasks.mustService(id));
    },

    async start(engineId) {
      if (isContainerId(engineId)) return (await engineOfPlain(engineId)).start(engineId);
      const s = await tasks.mustService(engineId);
      const t = newestTask(await tasks.tasks(engineId));
      const state = serviceInfo(s, t).state;
      if (!t || state === 'exited') {
        await tasks.newTask(s);
        await tasks.untilStarted(engineId, t?.ID ?? null);
      } else if (state === 'created') await tasks.untilStarted(engineId, null);
      return inspectService(await tasks.mustService(engineId));
    },

    async stop(engineId, graceSeconds) {
      if (isContainerId(engineId)) return (await engineOfPlain(engineId)).stop(engineId, graceSeconds);
      const c = await tasks
        .container(engineId)
        .catch((err) => (err instanceof NoSuchContainerError ? null : Promise.reject(err)));
      if (c) await c.engine.stop(c.cid, graceSeconds);
    },

    async remove(engineId) {
      if (isContainerId(engineId)) {
        await (await engineOfPlain(engineId)).remove(engineId);
        placement.removed(engineId);
        return;
      }
      try {
        await doors.close(engineId);
        await (await docker()).getService(engineId).remove();
      } catch (err) {
        if (!isStatus(err, 404)) throw err;
      }
    },

    async inspect(engineId) {
      if (isContainerId(engineId)) return (await engineOfPlain(engineId)).inspect(engineId);
      const s = await tasks.service(engineId);
      return s ? inspectService(s) : null;
    },

    list,

    // A service's state is its newest task's container's: no cheaper than the inspects list makes.
    async states(labels) {
      return (await list(labels)).map((c) => ({ engineId: c.engineId, state: c.state }));
    },

    ready: readyAtAddress,

    async wait(engineId) {
      if (isContainerId(engineId)) return (await engineOfPlain(engineId)).wait(engineId);
      const c = await tasks.awaitContainer(engineId);
      return c.engine.wait(c.cid);
    },

    async updateMemory(engineId, memoryBytes) {
      if (isContainerId(engineId)) return (await engineOfPlain(engineId)).updateMemory(engineId, memoryBytes);
      const s = await tasks.mustService(engineId);
      // In place on the running container; recorded on the service's labels (a label change starts no new task).
      const c = await tasks.container(engineId);
      if (c) await c.engine.updateMemory(c.cid, memoryBytes);
      await tasks.update(s, (spec) => void (spec.Labels[SWARM_LABELS.memory] = String(memoryBytes)));
    },

    async stats(engineId) {
      if (isContainerId(engineId)) return (await engineOfPlain(engineId)).stats(engineId);
      const c = await tasks
        .container(engineId)
        .catch((err) => (err instanceof NoSuchContainerError ? null : Promise.reject(err)));
      return c ? c.engine.stats(c.cid) : null;
    },
  };
}
