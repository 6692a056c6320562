import type Docker from 'dockerode';
import type { Duplex, Readable } from 'node:stream';
import type {
  ContainerInfo,
  ContainerRuntime,
  ContainerSpec,
  EngineStatus,
  RuntimeEvent,
  StatsSample,
} from './runtime.ts';
import { LABELS } from './runtime.ts';
import { EngineUnavailableError, NoSuchContainerError } from './errors.ts';
import {
  CONTAINER_CALLS,
  describeDockerError,
  guardEngineCalls,
  isStatus,
  translateDockerError,
} from './docker-errors.ts';
import { createEventReplay } from './event-replay.ts';
import { dockerodeOptions, resolveEngineEndpoint, type EngineTlsFiles } from './engine-endpoint.ts';
import { answersHttp } from './readiness.ts';
import { createEngineState } from './engine-state.ts';
import { versionOverSocket } from './engine-probe.ts';
import { dockerResources } from './docker-resources.ts';
import { containerLogs } from './docker-logs.ts';
import { lineSplitter, statsFromDocker } from './engine-parse.ts';
import { namedVolumes, volumeLabelsFor } from './ownership.ts';

export interface DockerRuntimeOptions {
  /** The engine: `unix:///path` or `tcp://host:port` (docker.host); else socketPath; else DOCKER_HOST… (engine-endpoint.ts). */
  host?: string;
  socketPath?: string;
  /** Certificates for a TCP engine (docker.tls). */
  tls?: EngineTlsFiles;
  /** Address the ports are published on and reached at (docker.publishHost); default 127.0.0.1. */
  publishHost?: string;
  /** Environment read when no option names the engine (DOCKER_HOST…); default process.env. */
  env?: NodeJS.ProcessEnv;
}

/** The one implementation of ContainerRuntime, over dockerode. Throws at once when the endpoint is misconfigured. */
export function createDockerRuntime(opts: DockerRuntimeOptions = {}): ContainerRuntime {
  const endpoint = resolveEngineEndpoint(opts, opts.env);
  const publishHost = opts.publishHost || '127.0.0.1';
  const where = { label: endpoint.label, tls: endpoint.kind === 'tcp' && endpoint.tls !== null };
  // dockerode (and ssh2 under it) take ~60 ms to load: loaded on first use, off the start path.
  let client: Promise<Docker> | null = null;
  const engine = (): Promise<Docker> =>
    (client ??= import('dockerode').then(({ default: Dockerode }) => new Dockerode(dockerodeOptions(endpoint))));
  const listeners = new Set<(e: RuntimeEvent) => void>();
  let eventStream: (Readable & { destroy(): void }) | null = null;
  let closed = false;
  // A socket engine is probed with node:http directly (engine-probe.ts); a TCP one through dockerode.
  const localSocket = endpoint.kind === 'socket' ? endpoint.socketPath : null;
  const health = createEngineState({ ping: async () => void (await withTimeout((await engine()).ping(), 2000)) });
  // Back up: the events subscription resumes at once (from the last event seen).
  health.onChange((s) => {
    if (s === 'up' && listeners.size) void startEvents();
  });
  // What was delivered: a resumed subscription asks the engine for events since shortly before the newest
  // one seen and skips those already delivered (event-replay.ts).
  const replay = createEventReplay();
  let subscribedAtNs = 0;

  function toInfo(d: Docker.ContainerInspectInfo): ContainerInfo {
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

  async function inspect(engineId: string): Promise<ContainerInfo | null> {
    const docker = await engine();
    try {
      return toInfo(await docker.getContainer(engineId).inspect());
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

  let starting = false;
  async function startEvents(): Promise<void> {
    if (eventStream || closed || starting) return;
    starting = true;
    const docker = await engine();
    starting = false;
    if (eventStream || closed) return;
    // Resumed: from the newest event seen, or from when the first subscription began (events of an outage are replayed).
    const from = replay.resumeFromNs() || subscribedAtNs;
    const since = from ? (from / 1e9).toFixed(9) : undefined;
    // `since` is "<seconds>.<nanoseconds>", a string for nanosecond precision (the engine's API);
    // @types/dockerode only knows a number of seconds. docker-modem serialises the filters object.
    const query: Omit<Docker.GetEventsOptions, 'since'> & { since?: string } = {
      since,
      filters: { type: ['container'], label: [`${LABELS.managed}=1`] },
    };
    docker.getEvents(query as Docker.GetEventsOptions, (err, stream) => {
      if (err || !stream) {
        health.noteError(err);
        // While the engine is down its return restarts the subscription; otherwise retry.
        if (!closed && health.state !== 'down') setTimeout(() => void startEvents(), 1000).unref();
        return;
      }
      health.noteOk();
      subscribedAtNs ||= Date.now() * 1e6;
      eventStream = stream as Readable & { destroy(): void };
      const split = lineSplitter((bytes, start, end) => {
        const line = bytes.toString('utf8', start, end);
        if (!line.trim()) return;
        let e: {
          Action: string;
          Actor?: { ID: string; Attributes?: Record<string, string> };
          timeNano?: number;
          time?: number;
        };
        try {
          e = JSON.parse(line);
        } catch {
          return;
        }
        const action = e.Action?.split(':')[0];
        if (!['start', 'die', 'oom', 'destroy', 'stop'].includes(action)) return;
        const attrs = e.Actor?.Attributes ?? {};
        const exit = attrs.exitCode !== undefined ? Number(attrs.exitCode) : null;
        const ev: RuntimeEvent = {
          engineId: e.Actor?.ID ?? '',
          action: action as RuntimeEvent['action'],
          exitCode: exit,
          labels: attrs,
          time: e.timeNano ? Math.floor(e.timeNano / 1e6) : Date.now(),
        };
        if (e.timeNano && !replay.fresh(`${ev.engineId}/${e.Action}`, e.timeNano)) return;
        for (const l of listeners) l(ev);
      });
      stream.on('data', (c: Buffer) => split.write(c));
      stream.on('error', () => undefined);
      stream.on('close', () => {
        eventStream = null;
        if (closed) return;
        health.suspect();
        if (listeners.size) setTimeout(() => void (health.state !== 'down' && startEvents()), 500).unref();
      });
    });
  }

  const runtime: ContainerRuntime = {
    publishHost,

    async probe(): Promise<EngineStatus> {
      try {
        // A local socket is asked directly (no dockerode on the health path); other endpoints through dockerode.
        const v = localSocket
          ? await versionOverSocket(localSocket, 2000)
          : await withTimeout((await engine()).version(), 2000);
        health.noteOk();
        return { ok: true, version: v.Version, apiVersion: v.ApiVersion, arch: v.Arch };
      } catch (err) {
        const typed = translateDockerError(err, 'probe', [], where);
        health.noteError(typed);
        return {
          ok: false,
          error: typed instanceof EngineUnavailableError ? typed.message : describeDockerError(err, where),
        };
      }
    },

    available: () => health.available(),
    onEngine: (listener) => health.onChange(listener),

    // Images, networks, volumes, exec: docker-resources.ts.
    ...dockerResources(engine),

    async run(spec: ContainerSpec, o = {}) {
      const docker = await engine();
      // Made before the container (the engine would make them unlabelled): an existing volume is kept as it is.
      for (const name of namedVolumes(spec.binds))
        await docker.createVolume({ Name: name, Labels: volumeLabelsFor(spec.labels) });
      const portKey = spec.publishPort ? `${spec.publishPort}/tcp` : undefined;
      const container = await docker.createContainer({
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
      });
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

    async ready({ hostPort }) {
      return hostPort !== null && answersHttp(publishHost, hostPort);
    },

    async list(labels) {
      const docker = await engine();
      const filters = { label: [`${LABELS.managed}=1`, ...Object.entries(labels).map(([k, v]) => `${k}=${v}`)] };
      const found = await docker.listContainers({ all: true, filters: JSON.stringify(filters) });
      const infos = await Promise.all(found.map((c) => inspect(c.Id)));
      return infos.filter((i): i is ContainerInfo => i !== null);
    },

    async wait(engineId) {
      const docker = await engine();
      const res = (await docker.getContainer(engineId).wait()) as { StatusCode: number };
      return res.StatusCode;
    },

    onEvent(listener) {
      listeners.add(listener);
      void startEvents();
      return () => {
        listeners.delete(listener);
      };
    },

    async logs(engineId, o) {
      return containerLogs((await engine()).getContainer(engineId), o, health);
    },

    async stats(engineId): Promise<StatsSample | null> {
      const docker = await engine();
      try {
        const c = docker.getContainer(engineId);
        const s = (await c.stats({ stream: false })) as unknown as Parameters<typeof statsFromDocker>[0];
        return statsFromDocker(s, 0);
      } catch (err) {
        if (isStatus(err, 404, 409)) return null;
        throw err;
      }
    },

    async attach(engineId): Promise<Duplex> {
      const docker = await engine();
      const stream = await docker
        .getContainer(engineId)
        .attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true });
      return stream as unknown as Duplex;
    },

    async resize(engineId, width, height) {
      const docker = await engine();
      await docker.getContainer(engineId).resize({ w: width, h: height });
    },

    async putArchive(engineId, dir, tar) {
      const docker = await engine();
      await docker.getContainer(engineId).putArchive(tar, { path: dir });
    },

    async close() {
      closed = true;
      health.close();
      listeners.clear();
      eventStream?.destroy();
      eventStream = null;
    },
  };

  // Every engine call reports to the engine state, and its failures become typed errors (docker-errors.ts).
  guardEngineCalls(
    runtime,
    [
      ...CONTAINER_CALLS,
      'ensureBaseImage',
      'buildImage',
      'removeImage',
      'imageCommand',
      'imageLabels',
      'importImage',
      'pullImage',
      'removeNetwork',
      'removeVolume',
      'networkLabels',
      'volumeLabels',
    ],
    where,
    {
      ok: () => health.noteOk(),
      failed: (typed) => {
        if (typed instanceof EngineUnavailableError) health.noteError(typed);
      },
    },
  );

  return runtime;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`the Docker engine did not answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });
}

export { describeDockerError } from './docker-errors.ts';
