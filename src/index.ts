// The programmatic API: `import { startEmulator } from 'scalingo-emulator'` in a test runner's
// setup, the way Miniflare or the Firebase emulators are started from tests. Port 0 and in-memory
// by default, nothing global: several instances run side by side in one process.
// The published declarations are index.d.ts at the package root (test/unit/package-types.test.ts
// checks they match these types).
import { loadConfig } from './config/load.ts';
import { type ConfigInput } from './config/schema.ts';
import { createEmulator, type Emulator, VERSION } from './emulator.ts';
import { defined } from './shared/defined.ts';

export type { AddonAccess } from './cli/up/addon-access.ts';
export type { DeploymentResult } from './cli/up/deploy.ts';
// `up`: a project folder running as the platform would run it (scalingo-emulator up).
export { type UpHandle, type UpOptions, up } from './cli/up/up.ts';
export { UpError } from './cli/up/up-error.ts';
export { type DataDirHolder, DataDirInUseError } from './db/data-dir-lock.ts';
export { VERSION };

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
  emulator: Emulator;
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
  | {
      type?: 'api';
      method?: string;
      path: string;
      latency_ms?: number;
      status?: 500 | 503 | 429;
      drop?: boolean;
      probability?: number;
      seed?: number;
      count?: number;
    }
  | { type: 'crash' | 'oom'; app: string; container: string }
  | { type: 'docker_unavailable'; seconds: number }
  | { type?: 'log_delay'; log_delay_ms: number; app?: string };

/** A fault as the control plane shows it: its spec, and how often it applied / may still apply. */
export type Fault = FaultSpec & {
  id: string;
  created_at: string | null;
  applied: number;
  remaining: number | null;
  expires_at: string | null;
};

export interface EmulatorFaults {
  add(fault: FaultSpec): Promise<Fault>;
  list(): Fault[];
  remove(id: string): void;
  clear(): void;
}

/** Starts an emulator (port 0, in memory, silent) and resolves once its start-up work is done. */
export async function startEmulator(options: StartEmulatorOptions = {}): Promise<StartedEmulator> {
  const config = loadConfig({
    file: options.configFile,
    ignoreDefaultFile: true,
    env: {},
    overrides: {
      ...options.config,
      port: options.port ?? 0,
      routerPort: options.routerPort ?? 0,
      sshPort: options.sshPort ?? 0,
      inMemory: options.inMemory ?? !options.dataDir,
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      logLevel: options.logLevel ?? 'silent',
    } as ConfigInput,
  });
  const emu = createEmulator(config);
  try {
    await emu.start();
    await emu.ready();
  } catch (err) {
    await emu.stop().catch(() => undefined);
    throw err;
  }
  const users: EmulatorUser[] = config.users.map((u, i) => {
    const row = defined(emu.area('accounts').auth.userByLogin(u.username), `configured user ${u.username}`);
    const token = i === 0 ? emu.startupToken : (u.apiTokens[0] ?? emu.area('accounts').auth.rotateStartupToken(row.id));
    return { username: u.username, email: u.email, password: u.password, token };
  });
  const { adminToken } = emu;
  const { control } = emu.area('control');
  const api = emu.urls.api;
  let stopped: Promise<void> | undefined;
  // In memory, nothing could find this instance's containers and images again: they go with it.
  const stop = () =>
    (stopped ??= (config.inMemory ? control.reset().catch(() => undefined) : Promise.resolve()).then(() => emu.stop()));
  return {
    apiUrl: api,
    authUrl: api,
    dbUrl: api,
    routerUrl: emu.urls.router,
    routerPort: emu.urls.routerPort,
    gitUrl: emu.urls.git ?? '',
    region: config.region.name,
    token: users[0].token,
    users,
    adminToken,
    dashboardUrl: `${api}/_emulator/?token=${adminToken}`,
    reset: (opts) => control.reset(opts),
    snapshot: async () => control.snapshot(),
    restore: (s) => control.restore(typeof s === 'string' ? s : s instanceof Uint8Array ? Buffer.from(s) : s.id),
    clock: {
      get mode() {
        return control.clock.mode;
      },
      now: () => control.clock.now(),
      advance: (ms) => control.clock.advance(ms),
    },
    faults: {
      add: (f) => control.faults.add(f),
      list: () => control.faults.list(),
      remove: (id) => control.faults.remove(id),
      clear: () => control.faults.clear(),
    },
    stop,
    [Symbol.asyncDispose]: stop,
    emulator: emu,
  };
}
