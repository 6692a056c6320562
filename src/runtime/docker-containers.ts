// The Docker runtime's containers: their life (run, start, stop, kill, remove, wait) and what the
// engine says of them (inspect, list, ready). Their streams: docker-container-io.ts.
import type Docker from 'dockerode';
import { isStatus } from './docker-errors.ts';
import { NoSuchContainerError } from './errors.ts';
import { namedVolumes, volumeLabelsFor } from './ownership.ts';
import { readyOn } from './readiness.ts';
import { type ContainerInfo, type ContainerRuntime, type ContainerSpec, LABELS } from './runtime.ts';

/** What the engine's inspect says of a container; its port: the one published on publishHost (or on every address). */
export function containerInfoOf(d: Docker.ContainerInspectInfo, publishHost: string): ContainerInfo {
  const ports = d.NetworkSettings?.Ports ?? {};
  let hostPort: number | null = null;
  for (const bindings of Object.values(ports)) {
    const b = (bindings ?? []).find((x) => x.HostIp === publishHost || x.HostIp === '0.0.0.0' || x.HostIp === '');
    if (b?.HostPort) hostPort = Number(b.HostPort);
  }
  const ts = (s: string | undefined) => (s && !s.startsWith('0001-') ? Date.parse(s) : null);
  return {
    engineId: d.Id,
    name: d.Name.replace(/^\//, ''),
    labels: d.Config.Labels ?? {},
    state: d.State.Status,
    exitCode: d.State.Running ? null : d.State.ExitCode,
    hostPort: d.State.Running ? hostPort : null,
    startedAt: ts(d.State.StartedAt),
    finishedAt: ts(d.State.FinishedAt),
    memoryLimit: d.HostConfig.Memory ?? 0,
    oomKilled: d.State.OOMKilled,
  };
}

/** The engine's create options of a container: labelled as the emulator's, ports published on publishHost only. */
export function createOptionsOf(spec: ContainerSpec, publishHost: string): Docker.ContainerCreateOptions {
  const portKey = spec.publishPort ? `${spec.publishPort}/tcp` : undefined;
  return {
    name: spec.name,
    Image: spec.image,
    Cmd: spec.cmd?.length ? spec.cmd : undefined,
    Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
    Labels: { ...spec.labels, [LABELS.managed]: '1' },
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
      PortBindings: portKey ? { [portKey]: [{ HostIp: publishHost, HostPort: '' }] } : undefined,
      Init: true,
    },
  };
}

/** Label filters of this emulator's containers carrying `labels` (every engine call listing them). */
export function managedFilter(labels: Record<string, string>): string {
  return JSON.stringify({ label: [`${LABELS.managed}=1`, ...Object.entries(labels).map(([k, v]) => `${k}=${v}`)] });
}

type Containers = Pick<
  ContainerRuntime,
  'run' | 'start' | 'stop' | 'kill' | 'remove' | 'inspect' | 'ready' | 'list' | 'states' | 'wait'
>;

export function dockerContainers(engine: () => Promise<Docker>, publishHost: string): Containers {
  async function inspect(engineId: string): Promise<ContainerInfo | null> {
    const docker = await engine();
    try {
      return containerInfoOf(await docker.getContainer(engineId).inspect(), publishHost);
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
      const container = await docker.createContainer(createOptionsOf(spec, publishHost));
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

    ready: readyOn(publishHost),

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
