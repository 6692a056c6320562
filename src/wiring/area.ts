// One shape for every area of the emulator, and the loops that bring them up and down. emulator.ts
// lists the areas once, in one table; each area is built from the shared dependencies by one file of
// src/wiring/. The table's order is the lifecycle: opened and started in order, stopped in reverse
// order, so what an area needs is earlier in the table and is still there while it stops. Route groups
// are mounted in the same order (more specific paths first: the apps area, with its catch-alls, is last).
import type { HttpAppDeps } from '../http/app.ts';
import type { UpgradeTable } from '../http/ws.ts';
import type { EmulatorConfig } from '../config/schema.ts';
import type { Db } from '../db/database.ts';
import type { ContainerRuntime } from '../runtime/runtime.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { Urls } from '../shared/urls.ts';

/** Whatever `createHttpApp({ routes })` mounts (a Hono sub-app today). */
export type RouteGroup = HttpAppDeps['routes'][number];

export interface StartContext {
  /** The container engine answered the start-up probe (work that needs it may run now). */
  engineUp: boolean;
}

export interface Area {
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
  clock: Clock;
  db: Db;
  runtime: ContainerRuntime;
  /** Labels this data dir's containers. */
  instanceId: string;
  /** The data dir (signing keys), null with --in-memory. */
  dataDir: string | null;
  /** Where working files go: the data dir, or a temp dir removed on stop. */
  stateDir: string;
  /** Known once the ports are bound (port 0 picks a free one): read it when needed, never keep it. */
  urls: () => Urls;
  /** WebSocket upgrades on the API port, by path prefix. */
  upgrades: UpgradeTable;
}

export function routesOf(areas: readonly Area[]): RouteGroup[] {
  return areas.flatMap((a) => a.routes ?? []);
}

/**
 * Runs one hook of every area in table order. The first failure ends the run and is thrown as it is
 * (callers such as the CLI read its `code`, e.g. EADDRINUSE), logged with the area's name.
 */
async function inOrder(areas: readonly Area[], logger: Logger, hook: string, run: (a: Area) => Promise<void> | void | undefined): Promise<void> {
  for (const a of areas) {
    try {
      await run(a);
    } catch (err) {
      logger.debug({ err, area: a.name, hook }, 'area failed');
      throw err;
    }
  }
}

export const openAreas = (areas: readonly Area[], logger: Logger) => inOrder(areas, logger, 'open', (a) => a.open?.());
export const startAreas = (areas: readonly Area[], logger: Logger, ctx: StartContext) => inOrder(areas, logger, 'start', (a) => a.start?.(ctx));
export const resumeAreas = (areas: readonly Area[], logger: Logger) => inOrder(areas, logger, 'resume', (a) => a.resume?.());

/**
 * Stops every area in reverse table order. One area's failure does not keep the others (and the
 * database, first in the table) from stopping: it is logged, and the first one is thrown at the end.
 */
export async function stopAreas(areas: readonly Area[], logger: Logger): Promise<void> {
  let first: unknown;
  for (const a of [...areas].reverse()) {
    if (!a.stop) continue;
    try {
      await a.stop();
    } catch (err) {
      logger.warn({ err, area: a.name }, 'area did not stop cleanly');
      first ??= err;
    }
  }
  if (first !== undefined) throw first;
}
