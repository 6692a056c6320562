// What the swarm runtime asks of the manager itself: whether it is a manager (probe, available),
// images (kept there and spread to the nodes when a service needs them), overlay networks and the
// volumes of addon servers (pinned to the manager).
import type Docker from 'dockerode';
import { isStatus } from './docker-errors.ts';
import { ConflictError } from './errors.ts';
import { type ContainerRuntime, type EngineStatus, LABELS } from './runtime.ts';
import { type SwarmNodes } from './swarm-nodes.ts';

/** How long removeVolume waits for Swarm to remove the container of a removed service's task, which holds the volume. */
const VOLUME_FREE_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const NOT_A_MANAGER =
  'docker.mode is "swarm" but the engine is not a swarm manager: run `docker swarm init` (or `docker swarm join` as a ' +
  'manager) there, or point docker.host at a manager';

type EngineHealth = Pick<ContainerRuntime, 'probe' | 'available' | 'onEngine'>;

export function swarmManagerHealth(manager: ContainerRuntime, docker: () => Promise<Docker>): EngineHealth {
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

  return {
    async probe(): Promise<EngineStatus> {
      const status = await manager.probe();
      if (!status.ok) return status;
      return (await isManager(true)) ? status : { ok: false, error: NOT_A_MANAGER };
    },
    // An engine that answers but is no manager cannot take work either (services need one): 503s meanwhile.
    available: async () => (await manager.available()) && (await isManager(false)),
    onEngine: (l) => manager.onEngine(l),
  };
}

type ManagerResources = Pick<
  ContainerRuntime,
  | 'ensureBaseImage'
  | 'buildImage'
  | 'imageExists'
  | 'removeImage'
  | 'imageCommand'
  | 'imageLabels'
  | 'importImage'
  | 'layerImage'
  | 'pullImage'
  | 'ensureNetwork'
  | 'removeNetwork'
  | 'networkLabels'
  | 'volumeLabels'
  | 'removeVolume'
>;

export function swarmManagerResources(
  manager: ContainerRuntime,
  docker: () => Promise<Docker>,
  nodes: SwarmNodes,
): ManagerResources {
  return {
    // Images live on the manager (spread to the nodes when a service needs them); networks are the manager's.
    ensureBaseImage: (tag) => manager.ensureBaseImage(tag),
    buildImage: (o) => manager.buildImage(o),
    imageExists: (tag) => manager.imageExists(tag),
    removeImage: (tag) => manager.removeImage(tag),
    imageCommand: (tag) => manager.imageCommand(tag),
    imageLabels: (tag) => manager.imageLabels(tag),
    importImage: (o) => manager.importImage(o),
    layerImage: (o) => manager.layerImage(o),
    pullImage: (ref, onLine) => manager.pullImage(ref, onLine),

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
  };
}
