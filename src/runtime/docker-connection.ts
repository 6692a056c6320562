// The Docker runtime's connection to its engine: where it is (engine-endpoint.ts), the dockerode
// client (loaded on first use), the engine's up/down state (engine-state.ts) and the probe. The swarm
// runtime reaches its manager through the same client loader.
import type Docker from 'dockerode';
import { describeDockerError, type ErrorEndpoint, translateDockerError } from './docker-errors.ts';
import {
  dockerodeOptions,
  type EngineEndpoint,
  type EngineTlsFiles,
  resolveEngineEndpoint,
} from './engine-endpoint.ts';
import { versionOverSocket } from './engine-probe.ts';
import { createEngineState, type EngineStateTracker } from './engine-state.ts';
import { EngineUnavailableError } from './errors.ts';
import { type EngineStatus } from './runtime.ts';

export interface DockerRuntimeOptions {
  /** The engine: `unix:///path` or `tcp://host:port` (docker.host); else socketPath; else DOCKER_HOST… (engine-endpoint.ts). */
  host?: string;
  socketPath?: string;
  /** Certificates for a TCP engine (docker.tls). */
  tls?: EngineTlsFiles;
  /** Address the ports are published on and reached at (docker.publishHost); default 127.0.0.1. */
  publishHost?: string;
  /**
   * A user-defined network the emulator's own container is attached to (docker.network): containers with a port join
   * it and are reached there, nothing is published (reach.ts).
   */
  network?: string;
  /** Environment read when no option names the engine (DOCKER_HOST…); default process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface DockerConnection {
  endpoint: EngineEndpoint;
  where: ErrorEndpoint;
  publishHost: string;
  /** The dockerode client, made on first use. */
  engine: () => Promise<Docker>;
  health: EngineStateTracker;
  probe(): Promise<EngineStatus>;
}

/** The endpoint, and how errors name it. Throws at once when the endpoint is misconfigured. */
export function engineEndpoint(opts: DockerRuntimeOptions): { endpoint: EngineEndpoint; where: ErrorEndpoint } {
  const endpoint = resolveEngineEndpoint(opts, opts.env);
  return { endpoint, where: { label: endpoint.label, tls: endpoint.kind === 'tcp' && endpoint.tls !== null } };
}

/** A dockerode client of the endpoint, made on first call: dockerode (and ssh2 under it) take ~60 ms to load, off the start path. */
export function lazyEngineClient(endpoint: EngineEndpoint): () => Promise<Docker> {
  let client: Promise<Docker> | null = null;
  return () =>
    (client ??= import('dockerode').then(({ default: Dockerode }) => new Dockerode(dockerodeOptions(endpoint))));
}

export function connectDocker(opts: DockerRuntimeOptions): DockerConnection {
  const { endpoint, where } = engineEndpoint(opts);
  const publishHost = opts.publishHost || '127.0.0.1';
  const engine = lazyEngineClient(endpoint);
  // A socket engine is probed with node:http directly (engine-probe.ts); a TCP one through dockerode.
  const localSocket = endpoint.kind === 'socket' ? endpoint.socketPath : null;
  const health = createEngineState({ ping: async () => void (await withTimeout((await engine()).ping(), 2000)) });

  return {
    endpoint,
    where,
    publishHost,
    engine,
    health,
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
  };
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
