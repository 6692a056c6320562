// The lifecycle units of the areas, and the loops that bring them up and down. Each area (src/wiring/areas.ts)
// returns its units when it is built; LIFECYCLE (src/wiring/lifecycle.ts) lists every unit once, in order:
// opened and started in order, stopped in reverse order, so what a unit needs is earlier in the list and is
// still there while it stops. Route groups are mounted in the same order (more specific paths first: the apps
// unit, with its catch-alls, is last).

import { type EmulatorConfig } from '../config/schema.ts';
import { type DataDirLock } from '../db/data-dir-lock.ts';
import { type Db } from '../db/database.ts';
import { type HttpAppDeps } from '../http/app.ts';
import { type UpgradeTable } from '../http/ws.ts';
import { type Faults } from '../modules/control/faults.ts';
import { type UpstreamSource } from '../router/proxy.ts';
import { type ContainerRuntime } from '../runtime/runtime.ts';
import { type ShutdownGate } from '../runtime/shutdown-gate.ts';
import { type Clock } from '../shared/clock.ts';
import { type Logger } from '../shared/logger.ts';
import { type Urls } from '../shared/urls.ts';

/** Whatever `createHttpApp({ routes })` mounts (a Hono sub-app today). */
export type RouteGroup = HttpAppDeps['routes'][number];

export interface StartContext {
  /** The container engine answered the start-up probe (work that needs it may run now). */
  engineUp: boolean;
}

export interface Unit {
  name: string;
  /** Mounted on the API in table order. */
  routes?: RouteGroup[];
  /** Inside `start()`, before it resolves: bind ports, settle what the last process left. */
  open?(): Promise<void> | void;
  /** In the background after every area opened (`ready()` waits for it), in table order. */
  start?(ctx: StartContext): Promise<void> | void;
  /** The engine answered after a start without it: work `start` skipped for lack of it, in table order. */
  resume?(): Promise<void> | void;
  /** In reverse table order; an area stops whether or not it started. */
  stop?(): Promise<void> | void;
}

/** What every area's builder may take from the composition root. */
export interface Shared {
  config: EmulatorConfig;
  logger: Logger;
  /** Platform time: `clock: "manual"` moves it only when advanced (src/shared/clock.ts). */
  clock: Clock;
  /**
   * Real time, whatever `clock` is: what protects the process rather than standing for platform time (rate-limit
   * windows). Tests may pass a ManualClock to move it.
   */
  wallClock: Clock;
  db: Db;
  runtime: ContainerRuntime;
  /** Closed at a stop: the runtime above then refuses to start anything new. */
  shutdownGate: ShutdownGate;
  /** Labels this data dir's containers. */
  instanceId: string;
  /** The data dir (signing keys), null with --in-memory. */
  dataDir: string | null;
  /** The data dir's lock, held from creation to stop (null with --in-memory). */
  dataDirLock: DataDirLock | null;
  /** Where working files go: the data dir, or a temp dir removed on stop. */
  stateDir: string;
  /** Known once the ports are bound (port 0 picks a free one): read it when needed, never keep it. */
  urls: () => Urls;
  /** WebSocket upgrades on the API port, by path prefix. */
  upgrades: UpgradeTable;
  /** The bound ports, once known (the servers and git areas fill them in). */
  setUrls: (next: Partial<Urls>) => void;
  /** API and workload faults of the control plane (the runtime above already goes through them). */
  faults: Faults;
  /** Token of the control plane (/_emulator/*): config adminToken, or a random `ad-…` one per start. */
  adminToken: string;
  /** Date.now() when the emulator was created (health). */
  startedAt: number;
  /** The router's upstreams, when a test replaces them (default: the running web containers). */
  upstreams?: UpstreamSource;
}

export function routesOf(units: readonly Unit[]): RouteGroup[] {
  return units.flatMap((u) => u.routes ?? []);
}

/**
 * Runs one hook of every unit in order. The first failure ends the run and is thrown as it is
 * (callers such as the CLI read its `code`, e.g. EADDRINUSE), logged with the unit's name.
 */
async function inOrder(
  units: readonly Unit[],
  logger: Logger,
  hook: string,
  run: (u: Unit) => Promise<void> | void | undefined,
): Promise<void> {
  for (const u of units) {
    try {
      await run(u);
    } catch (err) {
      logger.debug({ err, area: u.name, hook }, 'area failed');
      throw err;
    }
  }
}

export const openUnits = (units: readonly Unit[], logger: Logger) => inOrder(units, logger, 'open', (u) => u.open?.());
export const startUnits = (units: readonly Unit[], logger: Logger, ctx: StartContext) =>
  inOrder(units, logger, 'start', (u) => u.start?.(ctx));
export const resumeUnits = (units: readonly Unit[], logger: Logger) =>
  inOrder(units, logger, 'resume', (u) => u.resume?.());

/**
 * Stops every unit in reverse order. One unit's failure does not keep the others (and the database,
 * first in the list) from stopping: it is logged, and the first one is thrown at the end.
 */
export async function stopUnits(units: readonly Unit[], logger: Logger): Promise<void> {
  let first: unknown;
  for (const u of [...units].reverse()) {
    if (!u.stop) continue;
    try {
      await u.stop();
    } catch (err) {
      logger.warn({ err, area: u.name }, 'area did not stop cleanly');
      first ??= err;
    }
  }
  if (first !== undefined) throw first;
}
