// The Docker runtime's containers: their life (run, start, stop, kill, remove, wait) and what the
// engine says of them (inspect, list, ready). Their streams: docker-container-io.ts.
import type Docker from 'dockerode';
import { isStatus } from './docker-errors.ts';
import { NoSuchContainerError } from './errors.ts';
import { namedVolumes, volumeLabelsFor } from './ownership.ts';
import { addressOf, networkAlias, REACH_PORT_LABEL, type Reach } from './reach.ts';
import { readyAtAddress } from './readiness.ts';
import { type ContainerInfo, type ContainerRuntime, type ContainerSpec, LABELS } from './runtime.ts';

/**
 * What the engine's inspect says of a container. Its host port: the one published on publishHost (or on every
 * address); its address (reach.ts): that host port on publishHost, or on the emulator's network the container's own
 * port once it is attached there.
 */
export function containerInfoOf(d: Docker.ContainerInspectInfo, reach: Reach): ContainerInfo {
  const ports = d.NetworkSettings?.Ports ?? {};
  let hostPort: number | null = null;
  if (reach.kind === 'published')
    for (const bindings of Object.values(ports)) {
      const b = (bindings ?? []).find(
        (x) => x.HostIp === reach.publishHost || x.HostIp === '0.0.0.0' || x.HostIp === '',
      );
      if (b?.HostPort) hostPort = Number(b.HostPort);
    }
  const reachPort = reach.kind === 'published' ? hostPort : attachedPort(d, reach.network);
  const ts = (s: string | undefined) => (s && !s.startsWith('0001-') ? Date.parse(s) : null);
  return {
    engineId: d.Id,
    name: d.Name.replace(/^\//, ''),
    labels: d.Config.Labels ?? {},
    state: d.State.Status,
    exitCode: d.State.Running ? null : d.State.ExitCode,
    hostPort: d.State.Running ? hostPort : null,
    address: d.State.Running && reachPort !== null ? addressOf(reach, { engineId: d.Id, port: reachPort }) : null,
    startedAt: ts(d.State.StartedAt),
    finishedAt: ts(d.State.FinishedAt),
    memoryLimit: d.HostConfig.Memory ?? 0,
    oomKilled: d.State.OOMKilled,
  };
}

/** The port the container was made to be reached at, when it is attached to `network`; else null. */
function attachedPort(d: Docker.ContainerInspectInfo, network: string): number | null {
  const port = Number(d.Config.Labels?.[REACH_PORT_LABEL]);
  return d.NetworkSettings?.Networks?.[network] && Number.isInteger(port) && port > 0 ? port : null;
}

/**
 * The engine's create options of a container: labelled as the emulator's, its port published on publishHost only —
 * or, on the emulator's network, exposed and not published (the network is the way in: reach.ts).
 */
export function createOptionsOf(spec: ContainerSpec, reach: Reach): Docker.ContainerCreateOptions {
  const portKey = spec.publishPort ? `${spec.publishPort}/tcp` : undefined;
  const publishOn = reach.kind === 'published' ? reach.publishHost : null;
  const reachPort: Record<string, string> =
    portKey && !publishOn ? { [REACH_PORT_LABEL]: String(spec.publishPort) } : {};
  return {
    name: spec.name,
    Image: spec.image,
    Cmd: spec.cmd?.length ? spec.cmd : undefined,
    Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
    Labels: { ...spec.labels, [LABELS.managed]: '1', ...reachPort },
    WorkingDir: spec.workingDir,
    Tty: spec.tty ?? false,
    OpenStdin: spec.openStdin ?? false,
    StdinOnce: false,
    AttachStdin: spec.openStdin ?? false,
    AttachStdout: spec.openStdin ?? false,
    AttachStderr: spec.openStdin ?? false,
    ExposedPorts: portKey ? { [portKey]: {} } : undefined,
    User: spec.user,
    NetworkingConfig: spec.network
      ? { EndpointsConfig: { [spec.network]: { Aliases: spec.networkAliases ?? [] } } }
      : undefined,
    HostConfig: {
      Binds: spec.binds?.length ? spec.binds : undefined,
      NetworkMode: spec.networkNone ? 'none' : spec.network,
      Memory: spec.memoryBytes,
      // Swap as the platform sizes it is not emulated: memory+swap = memory (no swap).
      MemorySwap: spec.memoryBytes,
      // Only ever published on publishHost (loopback unless configured): the router and tests reach containers there.
      PortBindings: portKey && publishOn ? { [portKey]: [{ HostIp: publishOn, HostPort: '' }] } : undefined,
      Init: true,
    },
  };
}

/** Label filters of this emulator's containers carrying `labels` (every engine call listing them). */
export function managedFilter(labels: Record<string, string>): string {
  return JSON.stringify({ label: [`${LABELS.managed}=1`, ...Object.entries(labels).map(([k, v]) => `${k}=${v}`)] });
}

/**
 * A container with a port joins the emulator's network under its alias (reach.ts), before it starts: a second network
 * is a connect after the create (an API older than 1.44 takes one network at create). A network the engine lacks
 * leaves no container behind and says which setting names it: looked up first, since the engine accepts a connect of a
 * created container to any name and fails only its start (Docker 20.10), which would read as a missing container.
 */
async function joinEmulatorNetwork(docker: Docker, container: Docker.Container, network: string): Promise<void> {
  const net = docker.getNetwork(network);
  try {
    await net.inspect();
    await net.connect({ Container: container.id, EndpointConfig: { Aliases: [networkAlias(container.id)] } });
  } catch (err) {
    await container.remove({ force: true, v: true }).catch(() => undefined);
    if (isStatus(err, 404))
      throw new Error(
        `docker.network "${network}" does not exist on the engine: create it (docker network create ${network}) and attach the emulator's container to it`,
      );
    throw err;
  }
}

type Containers = Pick<
  ContainerRuntime,
  'run' | 'start' | 'stop' | 'kill' | 'remove' | 'inspect' | 'ready' | 'list' | 'states' | 'wait'
>;

export function dockerContainers(engine: () => Promise<Docker>, reach: Reach): Containers {
  async function inspect(engineId: string): Promise<ContainerInfo | null> {
    const docker = await engine();
    try {
      return containerInfoOf(await docker.getContainer(engineId).inspect(), reach);
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  /** Inspect of a container that must exist (just created or started): a typed error otherwise. */
  async function mustInspect(engineId: string): Promise<ContainerInfo> {
    const info = await inspect(engineId);
    if (!info) throw new NoSuchContainerError(engineId);
    return info;
  }

  return {
    async run(spec: ContainerSpec, o = {}) {
      const docker = await engine();
      // Made before the container (the engine would make them unlabelled): an existing volume is kept as it is.
      for (const name of namedVolumes(spec.binds))
        await docker.createVolume({ Name: name, Labels: volumeLabelsFor(spec.labels) });
      const container = await docker.createContainer(createOptionsOf(spec, reach));
      if (reach.kind === 'network' && spec.publishPort) await joinEmulatorNetwork(docker, container, reach.network);
      if (o.start !== false) await container.start();
      return mustInspect(container.id);
    },

    async start(engineId) {
      const docker = await engine();
      try {
        await docker.getContainer(engineId).start();
      } catch (err) {
        if (!isStatus(err, 304)) throw err;
      }
      return mustInspect(engineId);
    },

    async stop(engineId, graceSeconds) {
      const docker = await engine();
      try {
        await docker.getContainer(engineId).stop({ t: graceSeconds });
      } catch (err) {
        if (!isStatus(err, 304, 404)) throw err;
      }
    },

    async kill(engineId, signal) {
      const docker = await engine();
      await docker.getContainer(engineId).kill({ signal });
    },

    async remove(engineId) {
      const docker = await engine();
      try {
        await docker.getContainer(engineId).remove({ force: true, v: true });
      } catch (err) {
        if (!isStatus(err, 404, 409)) throw err;
      }
    },

    inspect,

    ready: readyAtAddress,

    async list(labels) {
      const docker = await engine();
      const found = await docker.listContainers({ all: true, filters: managedFilter(labels) });
      const infos = await Promise.all(found.map((c) => inspect(c.Id)));
      return infos.filter((i): i is ContainerInfo => i !== null);
    },

    async states(labels) {
      const docker = await engine();
      const found = await docker.listContainers({ all: true, filters: managedFilter(labels) });
      return found.map((c) => ({ engineId: c.Id, state: c.State }));
    },

    async wait(engineId) {
      const docker = await engine();
      const res = (await docker.getContainer(engineId).wait()) as { StatusCode: number };
      return res.StatusCode;
    },
  };
}
