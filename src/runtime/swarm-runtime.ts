// ContainerRuntime over Docker Swarm (docker.mode "swarm"; docs/architecture.md "Swarm"). The engine
// configured (docker.host…) must be a swarm manager. App and addon containers are services of one replica
// (swarm-services.ts), placed by Swarm on any active node; what needs a terminal or no network (one-offs,
// builds) runs as a plain container on the one-off node, joined to the app's attachable overlay network.
// Per-container calls (logs, stats, exec, attach, wait) go to the engine of the node running the task
// (swarm-nodes.ts); images stay on the manager and are copied to the nodes (nodes never pull).
import type Docker from 'dockerode';
import type { ContainerInfo, ContainerRuntime, EngineStatus } from './runtime.ts';
import { LABELS } from './runtime.ts';
import { createDockerRuntime, type DockerRuntimeOptions } from './docker-runtime.ts';
import { dockerodeOptions, resolveEngineEndpoint } from './engine-endpoint.ts';
import { CONTAINER_CALLS, guardEngineCalls, isStatus } from './docker-errors.ts';
import {
  ConflictError,
  EngineUnavailableError,
  NoSuchContainerError,
  NoSuchImageError,
  RuntimeError,
} from './errors.ts';
import { answersHttp } from './readiness.ts';
import {
  isContainerId,
  serviceInfo,
  serviceSpec,
  SWARM_LABELS,
  TASK_LABELS,
  newestTask,
  taskPort,
  type SwarmService,
} from './swarm-services.ts';
import { createSwarmNodes } from './swarm-nodes.ts';
import { createSwarmTasks } from './swarm-tasks.ts';
import { createSwarmEvents } from './swarm-events.ts';
import { createServiceDoors, type DoorTarget } from './swarm-forward.ts';

export interface SwarmRuntimeOptions extends DockerRuntimeOptions {
  /** Node (hostname or id) that runs plain containers: one-offs and builds; default the manager. */
  oneOffNode?: string;
  /** How often node availability is checked for drained or lost nodes (ms). */
  watchMs?: number;
}

/** How long removeVolume waits for Swarm to remove the container of a removed service's task, which holds the volume. */
const VOLUME_FREE_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const NOT_A_MANAGER =
  'docker.mode is "swarm" but the engine is not a swarm manager: run `docker swarm init` (or `docker swarm join` as a ' +
  'manager) there, or point docker.host at a manager';

export function createSwarmRuntime(opts: SwarmRuntimeOptions = {}): ContainerRuntime {
  const manager = createDockerRuntime(opts);
  const endpoint = resolveEngineEndpoint(opts, opts.env);
  const where = { label: endpoint.label, tls: endpoint.kind === 'tcp' && endpoint.tls !== null };
  let client: Promise<Docker> | null = null;
  const docker = () => (client ??= import('dockerode').then(({ default: D }) => new D(dockerodeOptions(endpoint))));
  const publishHost = manager.publishHost;
  const nodes = createSwarmNodes({ manager, managerDocker: docker, tls: opts.tls, publishHost });
  const tasks = createSwarmTasks(docker, nodes);
  const doors = createServiceDoors(publishHost);
  // Where the manager's published ports are reached: its own host for a TCP engine, else this machine.
  const managerHost = endpoint.kind === 'tcp' ? endpoint.host : '127.0.0.1';
  /** Engine of each plain container (one-offs, builds), by container id. */
  const plainEngine = new Map<string, ContainerRuntime>();
  const events = createSwarmEvents({
    manager,
    nodes,
    tasks,
    onTaskChange: (id) => doors.forget(id),
    watchMs: opts.watchMs ?? 2000,
  });

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
    };
  }

  let managerSeen = { ok: false, at: 0 };
  /** Whether the engine is a swarm manager, as it said within the last 5 s (or now, when `fresh`). */
  async function isManager(fresh: boolean): Promise<boolean> {
    if (!fresh && Date.now() - managerSeen.at < 5000) return managerSeen.ok;
    const info = (await (await docker()).info().catch(() => ({}))) as {
      Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean };
    };
    managerSeen = {
      ok: info.Swarm?.LocalNodeState === 'active' && info.Swarm.ControlAvailable === true,
      at: Date.now(),
    };
    return managerSeen.ok;
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

  /** Engine holding plain container `id` (the one-off node's when unknown: its typed errors then apply). */
  async function engineOfPlain(id: string): Promise<ContainerRuntime> {
    const known = plainEngine.get(id);
    if (known) return known;
    for (const e of [manager, ...(await nodes.otherEngines())]) if (await e.inspect(id).catch(() => null)) return e;
    return manager;
  }

  async function oneOffEngine(): Promise<ContainerRuntime> {
    if (!opts.oneOffNode) return manager;
    const node = (await nodes.refresh()).find((n) => n.hostname === opts.oneOffNode || n.id === opts.oneOffNode);
    if (!node)
      throw new RuntimeError(
        `docker.swarm.oneOffNode: no swarm node is named ${opts.oneOffNode}`,
        'SWARM_NO_SUCH_NODE',
      );
    return (await nodes.engineOf(node.id)).engine;
  }

  /** The engine and engine-side container id a per-container call goes to. */
  async function target(id: string): Promise<{ engine: ContainerRuntime; cid: string }> {
    if (isContainerId(id)) return { engine: await engineOfPlain(id), cid: id };
    const c = await tasks.mustContainer(id);
    return { engine: c.engine, cid: c.cid };
  }

  const runtime: ContainerRuntime = {
    publishHost,
    async probe(): Promise<EngineStatus> {
      const status = await manager.probe();
      if (!status.ok) return status;
      return (await isManager(true)) ? status : { ok: false, error: NOT_A_MANAGER };
    },
    // An engine that answers but is no manager cannot take work either (services need one): 503s meanwhile.
    available: async () => (await manager.available()) && (await isManager(false)),
    onEngine: (l) => manager.onEngine(l),

    // Images live on the manager (spread to the nodes when a service needs them); networks are the manager's.
    ensureBaseImage: (tag) => manager.ensureBaseImage(tag),
    buildImage: (o) => manager.buildImage(o),
    imageExists: (tag) => manager.imageExists(tag),
    removeImage: (tag) => manager.removeImage(tag),
    imageCommand: (tag) => manager.imageCommand(tag),
    imageLabels: (tag) => manager.imageLabels(tag),
    importImage: (o) => manager.importImage(o),
    pullImage: (ref, onLine) => manager.pullImage(ref, onLine),
    async commit(engineId, o) {
      const t = await target(engineId);
      await t.engine.commit(t.cid, o);
    },

    async ensureNetwork(name, labels) {
      const d = await docker();
      try {
        await d.getNetwork(name).inspect();
        return;
      } catch (err) {
        if (!isStatus(err, 404)) throw err;
      }
      // Overlay, attachable: services on every node and plain containers (one-offs) join it.
      await d
        .createNetwork({
          Name: name,
          Driver: 'overlay',
          Attachable: true,
          CheckDuplicate: true,
          Labels: { ...labels, [LABELS.managed]: '1' },
        })
        .catch((err) => {
          if (!isStatus(err, 409)) throw err;
        });
    },
    removeNetwork: (name) => manager.removeNetwork(name),
    networkLabels: (name) => manager.networkLabels(name),
    // Addon servers, the only users of named volumes, are pinned to the manager: their volumes are there.
    volumeLabels: (name) => manager.volumeLabels(name),
    async removeVolume(name) {
      // Addon servers are pinned to the manager: their volume is there. remove() only removes the service:
      // Swarm stops its task's container (within its grace period) and removes it a moment later, the volume in
      // use until then (409); the removal is tried again until it is free, and a volume still in use after that is
      // the caller's error to see, as on one engine.
      const deadline = Date.now() + VOLUME_FREE_MS;
      for (;;) {
        const err = await manager.removeVolume(name).then(
          () => null,
          (e: unknown) => e,
        );
        if (!err) break;
        if (!(err instanceof ConflictError) || Date.now() > deadline) throw err;
        await sleep(250);
      }
      // A copy on another node (a volume made there before the pin): an engine out of reach keeps it.
      for (const e of await nodes.otherEngines().catch(() => [])) await e.removeVolume(name).catch(() => undefined);
    },

    async run(spec, o = {}) {
      const build = spec.labels[LABELS.type] === 'build';
      if (spec.tty || spec.openStdin || spec.networkNone || build) {
        // Builds (whatever their network: builds.network) stay on the manager, where their images are committed and kept.
        const engine = spec.networkNone || build ? manager : await oneOffEngine();
        const info = await engine.run(spec, o);
        plainEngine.set(info.engineId, engine);
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
        const full = serviceSpec(spec, imageId, { replicas: o.start === false ? 0 : 1, constraints, publishedPort });
        created = (await d.createService(full as unknown as Docker.CreateServiceOptions)) as {
          id?: string;
          ID?: string;
        };
      } finally {
        if (publishedPort) tasks.portChosen(publishedPort);
      }
      const id = created.id ?? created.ID ?? '';
      if (o.start !== false) await tasks.untilStarted(id, null);
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

    async kill(engineId, signal) {
      const t = await target(engineId);
      await t.engine.kill(t.cid, signal);
    },

    async remove(engineId) {
      if (isContainerId(engineId)) {
        await (await engineOfPlain(engineId)).remove(engineId);
        plainEngine.delete(engineId);
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

    async list(labels) {
      const filters = { label: [`${LABELS.managed}=1`, ...Object.entries(labels).map(([k, v]) => `${k}=${v}`)] };
      const services = (await (
        await docker()
      ).listServices({ filters: JSON.stringify(filters) })) as unknown as SwarmService[];
      const out = await Promise.all(services.map((s) => inspectService(s)));
      for (const e of [manager, ...(await nodes.otherEngines())]) {
        // Another node's engine out of reach: its plain containers (one-offs) are not listed meanwhile.
        const found = await e
          .list(labels)
          .catch((err) => (e !== manager && err instanceof EngineUnavailableError ? [] : Promise.reject(err)));
        for (const c of found) if (!c.labels[TASK_LABELS.serviceId]) out.push(c);
      }
      return out;
    },

    ready: async ({ hostPort }) => hostPort !== null && answersHttp(publishHost, hostPort),

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

    async exec(engineId, cmd, o) {
      const t = await target(engineId);
      return t.engine.exec(t.cid, cmd, o);
    },
    async execStream(engineId, cmd, o) {
      const t = await target(engineId);
      return t.engine.execStream(t.cid, cmd, o);
    },

    onEvent: (listener) => events.onEvent(listener),

    async logs(engineId, o) {
      const t = await target(engineId);
      return t.engine.logs(t.cid, o);
    },

    async stats(engineId) {
      if (isContainerId(engineId)) return (await engineOfPlain(engineId)).stats(engineId);
      const c = await tasks
        .container(engineId)
        .catch((err) => (err instanceof NoSuchContainerError ? null : Promise.reject(err)));
      return c ? c.engine.stats(c.cid) : null;
    },

    async attach(engineId) {
      const t = await target(engineId);
      return t.engine.attach(t.cid);
    },
    async resize(engineId, width, height) {
      const t = await target(engineId);
      await t.engine.resize(t.cid, width, height);
    },
    async putArchive(engineId, dir, tar) {
      const t = await target(engineId);
      await t.engine.putArchive(t.cid, dir, tar);
    },

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
