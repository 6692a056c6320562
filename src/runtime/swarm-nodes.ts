// The nodes of a swarm, as the swarm runtime reaches them: the manager is the engine the emulator is
// configured with; every other node's engine is named by its node label `io.scalingo-emulator.engine`
// (`unix:///path` or `tcp://host:2376`, with docker.tls), set by whoever joined it. Logs, stats, exec,
// attach and events of a task are asked of the engine of the node that runs it. Images live on the
// manager (builds, imports): a service's image is copied to every node that lacks it (`docker save` |
// `docker load`, engine to engine) before the service is created, since nodes never pull.

import { type Readable } from 'node:stream';
import type Docker from 'dockerode';
import { engineEndpoint, lazyEngineClient } from './docker-connection.ts';
import { createDockerRuntime } from './docker-runtime.ts';
import { type EngineTlsFiles } from './engine-endpoint.ts';
import { EngineUnavailableError } from './errors.ts';
import { type ContainerRuntime } from './runtime.ts';
import { SWARM_LABELS } from './swarm-services.ts';

export interface SwarmNode {
  id: string;
  hostname: string;
  /** ready, down, unknown… */
  state: string;
  /** active, pause, drain */
  availability: string;
  /** Address the node advertises to the swarm (where its host-mode ports are published). */
  addr: string;
  manager: boolean;
  /** The node's engine, or null when it has no engine label (nothing can be asked of it). */
  engine: ContainerRuntime | null;
  docker: (() => Promise<Docker>) | null;
}

interface NodeJson {
  ID: string;
  Spec: { Labels?: Record<string, string>; Availability: string; Role: string };
  Description?: { Hostname?: string };
  Status: { State: string; Addr?: string };
}

export function createSwarmNodes(o: {
  manager: ContainerRuntime;
  managerDocker: () => Promise<Docker>;
  tls?: EngineTlsFiles;
  publishHost: string;
}) {
  const engines = new Map<string, { address: string; runtime: ContainerRuntime; docker: () => Promise<Docker> }>();
  const images = new Map<string, Promise<void>>();
  let selfId: string | null = null;
  let nodes: SwarmNode[] = [];

  function engineFor(address: string) {
    let e = engines.get(address);
    if (!e) {
      const runtime = createDockerRuntime({
        host: address,
        tls: address.startsWith('tcp://') ? o.tls : undefined,
        publishHost: o.publishHost,
        env: {},
      });
      const { endpoint } = engineEndpoint({
        host: address,
        tls: address.startsWith('tcp://') ? o.tls : undefined,
        env: {},
      });
      const docker = lazyEngineClient(endpoint);
      engines.set(address, (e = { address, runtime, docker }));
    }
    return e;
  }

  async function refresh(): Promise<SwarmNode[]> {
    const docker = await o.managerDocker();
    if (!selfId) selfId = ((await docker.info()) as { Swarm?: { NodeID?: string } }).Swarm?.NodeID ?? null;
    const list = (await docker.listNodes()) as NodeJson[];
    nodes = list.map((n) => {
      const self = n.ID === selfId;
      const address = n.Spec.Labels?.[SWARM_LABELS.engine];
      const e = !self && address ? engineFor(address) : null;
      return {
        id: n.ID,
        hostname: n.Description?.Hostname ?? n.ID,
        state: n.Status.State,
        availability: n.Spec.Availability,
        addr: n.Status.Addr ?? '',
        manager: self,
        engine: self ? o.manager : (e?.runtime ?? null),
        docker: self ? o.managerDocker : (e?.docker ?? null),
      };
    });
    return nodes;
  }

  /** The node `id`; its engine, or a clear error when it cannot be reached. */
  async function engineOf(nodeId: string | undefined): Promise<{ node: SwarmNode; engine: ContainerRuntime }> {
    let node = nodes.find((n) => n.id === nodeId);
    if (!node || (!node.engine && !node.manager)) node = (await refresh()).find((n) => n.id === nodeId);
    if (!node) throw new EngineUnavailableError(null, `swarm node ${nodeId ?? '(none yet)'} is not in the swarm`);
    if (!node.engine) {
      throw new EngineUnavailableError(
        null,
        `the engine of swarm node ${node.hostname} (${node.id}) is unknown: set its label ${SWARM_LABELS.engine}=unix:///… or tcp://…:2376`,
      );
    }
    return { node, engine: node.engine };
  }

  /** Copies image `tag` (id `imageId`) from the manager to every reachable node lacking it. */
  async function spreadImage(tag: string, imageId: string): Promise<void> {
    const all = nodes.length ? nodes : await refresh();
    await Promise.all(
      all
        .filter((n) => !n.manager && n.docker && n.state === 'ready')
        .map((n) => {
          const key = `${n.id}/${imageId}`;
          let p = images.get(key);
          if (!p) {
            p = copyImage(n, tag, imageId).catch((err: unknown) => {
              images.delete(key);
              throw err;
            });
            images.set(key, p);
          }
          return p;
        }),
    );
  }

  async function copyImage(n: SwarmNode, tag: string, imageId: string): Promise<void> {
    if (!n.docker) return;
    const target = await n.docker();
    try {
      await target.getImage(imageId).inspect();
      return;
    } catch {
      // missing: copied below
    }
    const source = await o.managerDocker();
    const tar = (await source.getImage(tag).get()) as unknown as Readable;
    const out = (await target.loadImage(tar)) as unknown as Readable;
    await new Promise<void>((resolve, reject) => {
      out.on('data', () => undefined);
      out.on('end', resolve);
      out.on('error', reject);
      tar.on('error', reject);
    });
  }

  return {
    refresh,
    engineOf,
    spreadImage,
    /** The nodes as last listed. */
    get list() {
      return nodes;
    },
    /** Engines of the nodes other than the manager (for events, lists of plain containers). */
    async otherEngines(): Promise<ContainerRuntime[]> {
      await refresh();
      return nodes
        .filter((n) => !n.manager && n.engine && n.state === 'ready')
        .map((n) => n.engine as ContainerRuntime);
    },
    get managerId() {
      return selfId;
    },
    async close(): Promise<void> {
      await Promise.all([...engines.values()].map((e) => e.runtime.close()));
      engines.clear();
    },
  };
}

export type SwarmNodes = ReturnType<typeof createSwarmNodes>;
