// Translation of dockerode's failures into the runtime's typed errors (errors.ts). Docker answers
// with an HTTP status and a JSON message; sockets fail with errno codes; TLS with openssl codes.
// Nothing outside src/runtime sees any of those.
import {
  ConflictError,
  EngineUnavailableError,
  NoSuchContainerError,
  NoSuchImageError,
  RuntimeError,
} from './errors.ts';
import { isEngineUnreachable, isTlsRefusal } from './runtime.ts';

export type DockerErr = Error & { statusCode?: number; json?: { message?: string } | string | null; reason?: string };
export const isStatus = (err: unknown, ...codes: number[]) => codes.includes((err as DockerErr)?.statusCode ?? -1);

/** Runtime methods whose first argument is an image tag. */
const IMAGE_METHODS = new Set(['removeImage', 'imageCommand', 'imageLabels', 'buildImage', 'importImage']);

function engineMessage(err: DockerErr): string {
  const j = err.json;
  if (j && typeof j === 'object' && j.message) return j.message;
  if (typeof j === 'string' && j.trim()) return j.trim();
  return err.reason ?? err.message;
}

/** Where the engine is, as errors name it; `tls`: spoken to over TLS (a hang-up there is a refused handshake). */
export interface ErrorEndpoint {
  label: string;
  tls: boolean;
}

/**
 * A TLS server that refuses the client's certificate may close the connection without an alert
 * (a Node or proxy endpoint under TLS 1.3): the HTTP client only sees a hang-up. On a TLS endpoint,
 * that is an engine out of reach for this client, not an engine answer.
 */
function isTlsHangUp(err: unknown, endpoint: ErrorEndpoint): boolean {
  const e = err as NodeJS.ErrnoException | undefined;
  return endpoint.tls && e?.code === 'ECONNRESET' && e.syscall === undefined;
}

/**
 * The typed error for a failure of `method` called with `args`, or the failure itself when it is
 * none of the typed cases (an engine error with its own message: a build that failed, a bad spec).
 */
export function translateDockerError(err: unknown, method: string, args: unknown[], endpoint: ErrorEndpoint): unknown {
  if (err instanceof RuntimeError) return err;
  if (isEngineUnreachable(err) || isTlsHangUp(err, endpoint))
    return new EngineUnavailableError(err, describeDockerError(err, endpoint));
  const e = err as DockerErr;
  if (isStatus(e, 404)) {
    const msg = engineMessage(e);
    if (IMAGE_METHODS.has(method)) return new NoSuchImageError(String(args[0]), { cause: err });
    // Creating a container from an image the engine lacks: the image is what is missing.
    if (method === 'run') {
      const spec = args[0] as { image?: string; name?: string };
      return /image/i.test(msg)
        ? new NoSuchImageError(spec.image ?? '?', { cause: err })
        : new NoSuchContainerError(spec.name ?? '?', { cause: err });
    }
    if (typeof args[0] === 'string' && !/network|volume/i.test(msg))
      return new NoSuchContainerError(args[0], { cause: err });
  }
  if (isStatus(e, 409)) return new ConflictError(engineMessage(e), { cause: err });
  return err;
}

/** The container and network calls every runtime guards (the swarm runtime's own, the Docker runtime's with its image calls). */
export const CONTAINER_CALLS = [
  'run',
  'start',
  'stop',
  'kill',
  'remove',
  'inspect',
  'list',
  'states',
  'wait',
  'logs',
  'stats',
  'attach',
  'resize',
  'putArchive',
  'updateMemory',
  'exec',
  'execStream',
  'ensureNetwork',
  'commit',
] as const;

/** What hears each guarded call's outcome (the engine state of the Docker runtime). */
export interface EngineCallWatcher {
  ok(): void;
  failed(typed: unknown): void;
}

/**
 * Replaces each named method of `runtime` by one whose failures become the runtime's typed errors
 * (translateDockerError), and reports every outcome to `watcher` when given.
 */
export function guardEngineCalls<R extends object>(
  runtime: R,
  names: readonly (keyof R & string)[],
  endpoint: ErrorEndpoint,
  watcher?: EngineCallWatcher,
): void {
  const methods = runtime as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  for (const name of names) {
    const fn = methods[name];
    methods[name] = async (...a: unknown[]) => {
      try {
        const r = await fn(...a);
        watcher?.ok();
        return r;
      } catch (err) {
        const typed = translateDockerError(err, name, a, endpoint);
        watcher?.failed(typed);
        throw typed;
      }
    };
  }
}

const TLS_HINT =
  "check docker.tls (ca: the CA that signed the engine's certificate; cert and key: a client certificate signed by the CA the engine trusts)";

/** Plain words for an engine that cannot be reached, naming where it was looked for. */
export function describeDockerError(
  err: unknown,
  endpoint: ErrorEndpoint = { label: 'the local socket', tls: false },
): string {
  const e = err as NodeJS.ErrnoException & DockerErr;
  if (isTlsRefusal(e) || (e?.code === 'EPROTO' && /ssl|tls|alert/i.test(e.message))) {
    return `the Docker engine at ${endpoint.label} cannot be reached: the TLS handshake failed (${e.code}: ${e.message}); ${TLS_HINT}`;
  }
  if (isTlsHangUp(e, endpoint)) {
    return (
      `the Docker engine at ${endpoint.label} cannot be reached: it closed the connection during the TLS ` +
      `handshake (${e.code}: ${e.message}), as an engine refusing the client certificate does; ${TLS_HINT}`
    );
  }
  if (isEngineUnreachable(e)) {
    return `the Docker engine cannot be reached (${e.code}) at ${endpoint.label}: is dockerd running? (scripts/docker-up.sh starts one)`;
  }
  return engineMessage(e ?? new Error(String(err)));
}
