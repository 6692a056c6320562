// The only view of the container engine the rest of the emulator has. docker-runtime.ts implements it
// over dockerode on one engine (with docker-resources.ts and images.ts), swarm-runtime.ts over a Docker Swarm;
// tests pass an in-memory one (test/support/fake-runtime.ts). All pass the same contract suite
// (test/contract/runtime-contract.ts); docs/architecture.md "Runtime" describes the whole.
import { type Duplex, type Readable } from 'node:stream';
import { EngineUnavailableError } from './errors.ts';
import { type NewLayers } from './image-archive.ts';
import { type Address } from './reach.ts';

export type { Address } from './reach.ts';

/** `arch`: Docker's name of the engine's architecture (amd64, arm64), where the engine says it. */
export type EngineStatus =
  | { ok: true; version: string; apiVersion: string; arch?: string }
  | { ok: false; error: string };

/** Labels every emulator-made container and image carries, so a restart can reconcile. */
export const LABELS = {
  managed: 'io.scalingo-emulator.managed', // "1"
  instance: 'io.scalingo-emulator.instance', // emulator instance id (one per data dir)
  appId: 'io.scalingo-emulator.app-id',
  appName: 'io.scalingo-emulator.app-name',
  type: 'io.scalingo-emulator.type', // web, worker, one-off…
  index: 'io.scalingo-emulator.index', // type_index
  containerId: 'io.scalingo-emulator.container-id', // the platform-side container id (ps `id`)
  deploymentId: 'io.scalingo-emulator.deployment-id',
  terminal: 'io.scalingo-emulator.terminal', // "1": an attached one-off, whose output goes to its terminal
  // Build and addon-server containers carry `owner` (the instance id) instead of `instance`: the
  // containers area reconciles (removes) what carries `instance` and the logs area follows it.
  owner: 'io.scalingo-emulator.owner',
  addonId: 'io.scalingo-emulator.addon-id',
  // Images committed from a build container, which blank `owner` (their containers would inherit it): the
  // instance that made them, so that only it removes them (ownership.ts).
  builtBy: 'io.scalingo-emulator.built-by',
} as const;

export interface ContainerSpec {
  /** Docker container name (unique on the engine). */
  name: string;
  image: string;
  /** Command as argv (e.g. ['sh', '-c', 'httpd -f -p $PORT']); empty = the image's CMD. */
  cmd?: string[];
  env: Record<string, string>;
  labels: Record<string, string>;
  /** Memory limit in bytes (the container size). */
  memoryBytes: number;
  /**
   * The port the container listens on that the emulator reaches (web and tcp containers, addon servers): published on
   * publishHost (127.0.0.1 unless configured) at a free host port, or on docker.network reached by the container's
   * alias there (reach.ts).
   */
  publishPort?: number;
  /** Interactive one-off: TTY + open stdin. */
  tty?: boolean;
  openStdin?: boolean;
  workingDir?: string;
  /**
   * Host paths or named volumes mounted in (`source:target[:ro]`): build caches, addon data. A named volume the
   * engine does not have yet is created with the container's ownership labels (volumeLabelsFor, ownership.ts).
   */
  binds?: string[];
  /** User-defined network joined (an app's network with its addons), with these aliases on it. */
  network?: string;
  networkAliases?: string[];
  /** No network at all (build containers): nothing but loopback. */
  networkNone?: boolean;
  /** User the command runs as (database servers refuse root). */
  user?: string;
}

export interface ContainerInfo {
  /** Engine container id. */
  engineId: string;
  name: string;
  labels: Record<string, string>;
  /** Engine state: created, running, restarting, exited, dead, paused, removing. */
  state: string;
  exitCode: number | null;
  /** Host port on publishHost the publishPort is reachable at, when published and running (never on docker.network). */
  hostPort: number | null;
  /**
   * Where this process reaches the publishPort while the container runs (the router, readiness, tunnels, consoles):
   * publishHost:hostPort, or <alias>:publishPort on docker.network. Null when not running or without a port.
   */
  address: Address | null;
  startedAt: number | null;
  finishedAt: number | null;
  memoryLimit: number;
  oomKilled: boolean;
}

/** Engine events the emulator reacts to (exits, crashes, OOM kills). */
export interface RuntimeEvent {
  engineId: string;
  action: 'start' | 'die' | 'oom' | 'destroy' | 'stop';
  exitCode: number | null;
  labels: Record<string, string>;
  time: number;
}

/** One line of a container's output, as Docker timestamps it. */
export interface LogLine {
  /** Time the engine received the line (ms since epoch) and its full-precision RFC 3339 form. */
  time: number;
  timestamp: string;
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface StatsSample {
  time: number;
  /** CPU used since the previous engine sample, as a fraction of one core (1.0 = one core busy). */
  cpu: number;
  memoryUsage: number;
  memoryLimit: number;
  /** Highest memory usage the engine reports (cgroup v1 max_usage), or the current usage when unknown. */
  memoryMaxUsage: number;
  swapUsage: number;
  swapLimit: number;
}

/** Whether the engine answers, as the runtime last saw it. */
export type EngineState = 'up' | 'down';

// Typed errors of every runtime (errors.ts): callers test instanceof, never engine codes.
export {
  ConflictError,
  EngineUnavailableError,
  isEngineUnavailable,
  NoSuchContainerError,
  NoSuchImageError,
  RuntimeError,
} from './errors.ts';

/**
 * Errors: a runtime throws the typed errors of errors.ts — EngineUnavailableError when the engine
 * cannot be reached, NoSuchContainerError / NoSuchImageError for what the engine does not have,
 * ConflictError when the state of a container refuses the call. Calls documented as tolerant
 * (stop and remove of a missing container, inspect/stats answering null) do not throw those.
 */
/** A container's engine id and the engine's state of it (`running`, `exited`, `paused`…). */
export interface ContainerState {
  engineId: string;
  state: string;
}

/** What layerImage makes: the new image (NewLayers) over the base image of that tag. */
export interface LayerImageSpec extends NewLayers {
  base: string;
}

export interface ContainerRuntime {
  /**
   * Where the ports it publishes are reached from this process (the router, readiness, db-tunnels):
   * 127.0.0.1 for a local engine, the engine's host for a remote one.
   */
  readonly publishHost: string;
  /**
   * The address of a container from its engine id and the port of its ContainerInfo.address (what the containers
   * table keeps): the one function both ways of reaching containers go through (reach.ts).
   */
  addressOf(c: { engineId: string; port: number }): Address;
  /** Asks the engine whether it answers (ping + version), within a short timeout. */
  probe(): Promise<EngineStatus>;
  /**
   * Whether work needing the engine can be accepted now: the runtime's state when the engine
   * answered within the last second, else a ping (short timeout) that refreshes it.
   */
  available(): Promise<boolean>;
  /**
   * Engine transitions: 'down' when a call or a stream finds it unreachable, 'up' when it answers
   * again (the runtime pings it every second while down). Returns an unsubscribe function.
   */
  onEngine(listener: (state: EngineState) => void): () => void;

  // Images
  /** Builds the base busybox image when missing (offline, FROM scratch). */
  ensureBaseImage(tag: string): Promise<void>;
  /**
   * Builds an image from a directory (with its Dockerfile, or `dockerfile` text given). Lines of output go to onLine.
   * `network`: the RUN steps' network, as `docker build --network`: `none` (offline builds), `bridge`, or a
   * user-defined network's name; absent = the engine's default.
   */
  buildImage(opts: {
    contextDir: string;
    dockerfile?: string;
    tag: string;
    labels: Record<string, string>;
    network?: string;
    onLine?: (line: string) => void;
  }): Promise<void>;
  imageExists(tag: string): Promise<boolean>;
  removeImage(tag: string): Promise<void>;
  /** Default command of an image (its CMD/ENTRYPOINT joined), '' when none. */
  imageCommand(tag: string): Promise<string>;
  /** Labels of an image, or null when the engine has no such image. */
  imageLabels(tag: string): Promise<Record<string, string> | null>;
  /**
   * `docker pull` of an image by name, from where the engine's registry configuration says (Docker Hub or its
   * mirrors); progress lines go to onLine. Resolves the digest the engine recorded (`debian@sha256:…`).
   */
  pullImage(ref: string, onLine?: (line: string) => void): Promise<{ digest: string }>;
  /** `docker import` of a root filesystem tarball, with Dockerfile-like changes (ENV, CMD, LABEL…). */
  importImage(opts: { tarPath: string; tag: string; changes: string[] }): Promise<void>;
  /** `docker commit`: a container's filesystem as an image, with changes (CMD, ENV, LABEL…). */
  commit(engineId: string, opts: { tag: string; changes: string[] }): Promise<void>;
  /**
   * An image made of `base` plus new layers the host writes (`fill`), loaded by the engine in one pass
   * (`docker load` of a docker-archive made on the fly, image-archive.ts): no container, and the engine
   * writes the files once where putArchive then `commit` writes them twice. Resolves false, having done
   * nothing, where the engine's image store needs every layer in an archive (the containerd image store):
   * the caller builds by commit there. A failed load leaves no image of that tag.
   */
  layerImage(opts: LayerImageSpec): Promise<boolean>;

  // Networks and volumes (apps and their addons)
  /** Creates a bridge network unless it exists. */
  ensureNetwork(name: string, labels: Record<string, string>): Promise<void>;
  removeNetwork(name: string): Promise<void>;
  removeVolume(name: string): Promise<void>;
  /** Labels of a network or a volume, or null when the engine has none of that name (what removals check). */
  networkLabels(name: string): Promise<Record<string, string> | null>;
  volumeLabels(name: string): Promise<Record<string, string> | null>;

  // Containers
  /** Creates (and unless `start: false`, starts) a container. */
  run(spec: ContainerSpec, opts?: { start?: boolean }): Promise<ContainerInfo>;
  start(engineId: string): Promise<ContainerInfo>;
  /** Docker's normal shutdown: SIGTERM, then SIGKILL after graceSeconds. */
  stop(engineId: string, graceSeconds: number): Promise<void>;
  kill(engineId: string, signal: string): Promise<void>;
  remove(engineId: string): Promise<void>;
  inspect(engineId: string): Promise<ContainerInfo | null>;
  /** Every emulator-managed container matching all these labels (running or not). */
  list(labels: Record<string, string>): Promise<ContainerInfo[]>;
  /**
   * The engine's state now (`running`, `exited`…) of every emulator-managed container matching all these labels:
   * one engine call, no inspect per container (what `ps` answers on every request).
   */
  states(labels: Record<string, string>): Promise<ContainerState[]>;
  /**
   * Readiness of a web container, checked once (the caller polls within its own deadline): whether
   * its process answers on the published port. Docker answers TCP on a published port before the
   * app listens, so its runtime asks for an HTTP answer (any status) at the container's address.
   */
  ready(c: { engineId: string; address: Address | null }): Promise<boolean>;
  /** Waits for a container to exit; resolves its exit code. */
  wait(engineId: string): Promise<number>;
  /** Changes the memory limit of a container in place (addon plan changes). */
  updateMemory(engineId: string, memoryBytes: number): Promise<void>;
  /**
   * Runs a command in a running container; output bounded by maxBytes (rest dropped). `stdin`, when given, is
   * streamed to the command's standard input, closed at its end (a restore's archive: issue 22).
   */
  exec(
    engineId: string,
    cmd: string[],
    opts?: { user?: string; env?: Record<string, string>; maxBytes?: number; stdin?: Readable },
  ): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  /** Runs a command in a running container and streams its stdout (backups); `exitCode` resolves at the end. */
  execStream(
    engineId: string,
    cmd: string[],
    opts?: { user?: string; env?: Record<string, string> },
  ): Promise<{ stdout: Readable; exitCode: Promise<number> }>;

  // Streams
  /** Engine events for emulator-managed containers; returns an unsubscribe function. */
  onEvent(listener: (e: RuntimeEvent) => void): () => void;
  /** Output of a container: lines from `sinceMs` (inclusive, millisecond precision: callers dedupe), then live ones when follow. */
  /** `takeWaiting` (optional): the lines already received and not yet taken, without waiting (a burst in one go). */
  logs(
    engineId: string,
    opts: { follow: boolean; sinceMs?: number; tail?: number },
  ): Promise<AsyncIterable<LogLine> & { close(): void; takeWaiting?(): LogLine[] }>;
  /** One stats sample, read from the engine now. */
  stats(engineId: string): Promise<StatsSample | null>;
  /** Raw TTY stream of an interactive container (attach with stdin). */
  attach(engineId: string): Promise<Duplex>;
  resize(engineId: string, width: number, height: number): Promise<void>;
  /** Copies a tar archive into a directory of the container (created beforehand by the caller's image or mkdir). */
  putArchive(engineId: string, dir: string, tar: Readable | Buffer): Promise<void>;

  close(): Promise<void>;
}

/**
 * True when an error means the engine itself cannot be reached (not a refusal by the engine): the
 * runtime's own translation of socket errors (errno codes, TLS handshake refusals). Outside
 * src/runtime, test `instanceof EngineUnavailableError` (isEngineUnavailable) instead.
 */
export function isEngineUnreachable(err: unknown): boolean {
  if (err instanceof EngineUnavailableError) return true;
  const e = err as NodeJS.ErrnoException | undefined;
  if (!e) return false;
  if (isTlsRefusal(e)) return true;
  return SOCKET_CODES.includes(e.code ?? '') && e.syscall !== undefined;
}

const SOCKET_CODES = [
  'ECONNREFUSED',
  'ENOENT',
  'EACCES',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPROTO',
];
// Node's TLS failures: the server's certificate not trusted (openssl verify codes) or an alert sent by
// a server that refused our certificate (ERR_SSL_…ALERT…).
const TLS_CODES = [
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
];

/** A TLS handshake with the engine failed: one side refused the other's certificate. */
export function isTlsRefusal(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  return TLS_CODES.includes(code) || code.startsWith('ERR_SSL_');
}

export const ENGINE_UNREACHABLE_MESSAGE =
  'The Docker engine cannot be reached, so containers cannot be managed right now: start it (scripts/docker-up.sh) and retry.';
