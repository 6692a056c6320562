// Type declarations of the programmatic API (dist/index.mjs). Written by hand from src/index.ts;
// test/unit/package-types.test.ts fails when the two differ.

import type { Writable } from 'node:stream';

export declare const VERSION: string;

export interface StartEmulatorOptions {
  /** Any key of emulator.config.json (users, apps, intervals, clock…); applied over the defaults. */
  config?: Record<string, unknown>;
  /** A configuration file to read first (nothing is read from the working directory otherwise). */
  configFile?: string;
  /** API port; 0 (default) picks a free one. */
  port?: number;
  /** Router port; 0 (default) picks a free one. */
  routerPort?: number;
  /** SSH port of the git endpoint (git push); 0 (default) picks a free one. */
  sshPort?: number;
  /** Keep state in memory (default true); false writes to `dataDir`. */
  inMemory?: boolean;
  dataDir?: string;
  /** pino level of the emulator's own logs (default 'silent'). */
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

export interface EmulatorUser {
  username: string;
  email: string;
  password: string;
  /** An API token of this user (HTTP basic with an empty username, or exchanged for a bearer). */
  token: string;
}

export interface StartedEmulator {
  /** Base URL of the API (SCALINGO_API_URL). */
  apiUrl: string;
  /** Base URL of the auth service (SCALINGO_AUTH_URL): the same port as the API. */
  authUrl: string;
  /** Base URL of the database API (SCALINGO_DB_URL): the same port as the API. */
  dbUrl: string;
  /** The router: an app answers at http://<app>.localhost:<routerPort>. */
  routerUrl: string;
  routerPort: number;
  /** The git endpoint: ssh://git@127.0.0.1:<port> (push to <gitUrl>/<app>.git). */
  gitUrl: string;
  /** Region name (SCALINGO_REGION). */
  region: string;
  /** An API token of the first configured user. */
  token: string;
  /** Every configured user with an API token. */
  users: EmulatorUser[];
  /** Bearer of the control plane (/_emulator/*). */
  adminToken: string;
  /** The dashboard, signed in through its link: open it in a browser. */
  dashboardUrl: string;
  /** Back to an empty platform (apps, containers, events, faults…), or only one user's apps; users and their tokens stay. */
  reset(opts?: ResetOptions): Promise<void>;
  /** Captures the state (database and formation); `restore()` brings it back, containers reconciled with Docker. */
  snapshot(): Promise<Snapshot>;
  restore(snapshot: Snapshot | string | Uint8Array): Promise<void>;
  /** The emulator's clock; `advance(ms)` moves a manual clock (`config: { clock: 'manual' }`). */
  clock: EmulatorClock;
  /** API and workload faults (the same as /_emulator/faults). */
  faults: EmulatorFaults;
  /** Stops the emulator: ports closed; in memory (the default), the containers and images it made are removed. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
  /** The instance itself, for what the API above does not cover (not a stable interface). */
  emulator: unknown;
}

export interface ResetOptions {
  /** Only this user's apps (username or e-mail); default: everything. */
  user?: string;
}

export interface Snapshot {
  id: string;
  /** ISO 8601. */
  created_at: string | null;
  /** Bytes of the SQLite image. */
  size: number;
}

export interface EmulatorClock {
  mode: 'system' | 'manual';
  now(): number;
  /** Moves a manual clock: bearer tokens and signed URLs expire, alerts fire, timers due run. */
  advance(ms: number): void;
}

/** An API fault (`path` given), a workload fault, or a delay of log delivery. */
export type FaultSpec =
  | { type?: 'api'; method?: string; path: string; latency_ms?: number; status?: 500 | 503 | 429; drop?: boolean; probability?: number; seed?: number; count?: number }
  | { type: 'crash' | 'oom'; app: string; container: string }
  | { type: 'docker_unavailable'; seconds: number }
  | { type?: 'log_delay'; log_delay_ms: number; app?: string };

/** A fault as the control plane shows it: its spec, and how often it applied / may still apply. */
export type Fault = FaultSpec & { id: string; created_at: string | null; applied: number; remaining: number | null; expires_at: string | null };

export interface EmulatorFaults {
  add(fault: FaultSpec): Promise<Fault>;
  list(): Fault[];
  remove(id: string): void;
  clear(): void;
}

/** Starts an emulator (port 0, in memory, silent) and resolves once its start-up work is done. */
export declare function startEmulator(options?: StartEmulatorOptions): Promise<StartedEmulator>;

/** Options of `up()`: those of the emulator it starts (or finds on `port`), and of the project. */
export interface UpOptions {
  /** API port: an emulator answering there is used, otherwise one is started on it (default: the config's, 5100). */
  port?: number;
  routerPort?: number;
  sshPort?: number;
  /** Where the started emulator keeps its state (default: the config's, .emulator-data). */
  dataDir?: string;
  inMemory?: boolean;
  /** A configuration file (default: emulator.config.json in the working directory when present). */
  configFile?: string;
  /** pino level of the started emulator's logs, on stderr (default 'warn'). */
  logLevel?: string;
  /** The environment read for EMULATOR_* settings and `required` variables (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** The project folder (default: the working directory). */
  dir?: string;
  /** The app's name (default: the folder's name, made valid). */
  app?: string;
  /** Redeploy on changes (default true). */
  watch?: boolean;
  /** Follow and print the app's logs (default true). */
  logs?: boolean;
  /** Where lines go (default: stdout). */
  out?: Writable & { isTTY?: boolean };
  /** Colours (default: when `out` is a terminal and NO_COLOR is unset). */
  color?: boolean;
  /** Debounce of redeploys after a change, ms (default 300). */
  debounceMs?: number;
  /**
   * Aborted, `up` stops whatever the moment: no new call, the work in flight ended, the emulator it
   * started stopped (with its containers); `up()` then rejects with the signal's reason.
   */
  signal?: AbortSignal;
  /** The process running the emulator this `up` started (the command's own, or its background one), recorded for `down`. */
  emulatorPid?: number;
}

export interface AddonAccess {
  kind: string;
  addonId: string;
  /** 127.0.0.1:<port> when the server's port is published on the host. */
  host: string | null;
  port: number | null;
  /** The URL the host can use (the app's variable with the host and port replaced). */
  url: string | null;
  /** One line for the terminal. */
  hint: string;
}

export interface DeploymentResult {
  id: string;
  status: string;
  /** Seconds from the archive to the end. */
  seconds: number;
  /** The output's last error line ("!      …"), when it failed. */
  reason?: string;
}

export interface UpHandle {
  app: string;
  /** http://<app>.localhost:<router port> */
  url: string;
  apiUrl: string;
  /** An API token of the configured user (valid while `up` runs). */
  token: string;
  addons: AddonAccess[];
  /** The variables for the official CLI (SCALINGO_API_URL…). */
  cliEnv: Record<string, string>;
  /** The deployment made at start (undefined when the running version was already up to date). */
  firstDeployment?: DeploymentResult;
  /** Deployments made since (live changes), newest last. */
  deployments: DeploymentResult[];
  /** Deploys now (as a change would); resolves when it ends. */
  redeploy(): Promise<DeploymentResult>;
  /** Stops watching and following; stops the emulator `up` started (its containers stop, data stays). */
  stop(): Promise<void>;
  /** The emulator `up` started (undefined when it used one already running); not a stable interface. */
  emulator?: unknown;
}

/** Who holds a data dir (one emulator process per data dir). */
export interface DataDirHolder {
  pid: number;
  /** The API's URL, once the ports are bound (null while the process starts). */
  api: string | null;
  routerPort: number | null;
  startedAt: string;
}

/** An emulator was asked to open a data dir another emulator process holds. */
export declare class DataDirInUseError extends Error {
  readonly dataDir: string;
  readonly holder: DataDirHolder | null;
  constructor(dataDir: string, holder: DataDirHolder | null);
}

/** A mistake of the caller's (bad scalingo.json, unknown addon, port in use…): its message is one line. */
export declare class UpError extends Error {
  /** The HTTP status when the emulator refused a call. */
  readonly status?: number;
  constructor(message: string, status?: number);
}

/** Runs a project folder as the platform would: app, addons, variables, deployment, logs, redeploys on change. */
export declare function up(options?: UpOptions): Promise<UpHandle>;
