// Where a per-container call of the swarm runtime goes: a service's task container on the engine of
// the node running it (swarm-tasks.ts), or a plain container (one-off, build) on the engine it was run on.

import { RuntimeError } from './errors.ts';
import { type ContainerRuntime } from './runtime.ts';
import { type SwarmNodes } from './swarm-nodes.ts';
import { isContainerId } from './swarm-services.ts';
import { type SwarmTasks } from './swarm-tasks.ts';

export function createSwarmPlacement(o: {
  manager: ContainerRuntime;
  nodes: SwarmNodes;
  tasks: SwarmTasks;
  /** Node (hostname or id) that runs plain containers; default the manager. */
  oneOffNode?: string;
}) {
  const { manager, nodes, tasks } = o;
  /** Engine of each plain container (one-offs, builds), by container id. */
  const plainEngine = new Map<string, ContainerRuntime>();

  /** Engine holding plain container `id` (the one-off node's when unknown: its typed errors then apply). */
  async function engineOfPlain(id: string): Promise<ContainerRuntime> {
    const known = plainEngine.get(id);
    if (known) return known;
    for (const e of [manager, ...(await nodes.otherEngines())]) if (await e.inspect(id).catch(() => null)) return e;
    return manager;
  }

  async function oneOffEngine(): Promise<ContainerRuntime> {
    if (!o.oneOffNode) return manager;
    const node = (await nodes.refresh()).find((n) => n.hostname === o.oneOffNode || n.id === o.oneOffNode);
    if (!node)
      throw new RuntimeError(`docker.swarm.oneOffNode: no swarm node is named ${o.oneOffNode}`, 'SWARM_NO_SUCH_NODE');
    return (await nodes.engineOf(node.id)).engine;
  }

  /** The engine and engine-side container id a per-container call goes to. */
  async function target(id: string): Promise<{ engine: ContainerRuntime; cid: string }> {
    if (isContainerId(id)) return { engine: await engineOfPlain(id), cid: id };
    const c = await tasks.mustContainer(id);
    return { engine: c.engine, cid: c.cid };
  }

  return {
    engineOfPlain,
    oneOffEngine,
    target,
    /** A plain container was run on `engine`. */
    placed: (id: string, engine: ContainerRuntime) => void plainEngine.set(id, engine),
    /** A plain container was removed. */
    removed: (id: string) => void plainEngine.delete(id),
  };
}

export type SwarmPlacement = ReturnType<typeof createSwarmPlacement>;

type Forwarded = Pick<
  ContainerRuntime,
  'commit' | 'kill' | 'exec' | 'execStream' | 'logs' | 'attach' | 'resize' | 'putArchive'
>;

/** Per-container calls that go as they are to the engine holding the container (placement.target). */
export function forwardedCalls(placement: SwarmPlacement): Forwarded {
  const { target } = placement;
  return {
    async commit(engineId, o) {
      const t = await target(engineId);
      await t.engine.commit(t.cid, o);
    },
    async kill(engineId, signal) {
      const t = await target(engineId);
      await t.engine.kill(t.cid, signal);
    },
    async exec(engineId, cmd, o) {
      const t = await target(engineId);
      return t.engine.exec(t.cid, cmd, o);
    },
    async execStream(engineId, cmd, o) {
      const t = await target(engineId);
      return t.engine.execStream(t.cid, cmd, o);
    },
    async logs(engineId, o) {
      const t = await target(engineId);
      return t.engine.logs(t.cid, o);
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
  };
}
