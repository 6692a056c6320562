// Type declarations of the programmatic API (dist/index.mjs). Written by hand from src/index.ts;
// test/unit/package-types.test.ts fails when the two differ.

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
