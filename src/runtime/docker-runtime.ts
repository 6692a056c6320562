import Docker from 'dockerode';
import type { ContainerRuntime, EngineStatus } from './runtime.ts';

export interface DockerRuntimeOptions {
  socketPath?: string;
}

export function createDockerRuntime(opts: DockerRuntimeOptions = {}): ContainerRuntime & { docker: Docker } {
  const docker = opts.socketPath ? new Docker({ socketPath: opts.socketPath }) : new Docker();

  return {
    docker,
    async probe(): Promise<EngineStatus> {
      try {
        const v = await withTimeout(docker.version(), 2000);
        return { ok: true, version: v.Version, apiVersion: v.ApiVersion };
      } catch (err) {
        return { ok: false, error: describeDockerError(err) };
      }
    },
    async close() {},
  };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`the Docker engine did not answer within ${ms} ms`)), ms);
    p.then((v) => (clearTimeout(t), resolve(v)), (e) => (clearTimeout(t), reject(e)));
  });
}

export function describeDockerError(err: unknown): string {
  const e = err as NodeJS.ErrnoException & { statusCode?: number; json?: { message?: string } };
  if (e?.code === 'ENOENT' || e?.code === 'ECONNREFUSED' || e?.code === 'EACCES') {
    return `the Docker engine cannot be reached (${e.code}): is dockerd running? (scripts/docker-up.sh starts one)`;
  }
  return e?.json?.message ?? e?.message ?? String(err);
}
