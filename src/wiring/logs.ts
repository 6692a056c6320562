// Wiring of the logs area (issue #5): collection → pipeline → history (SQLite) → hub (WebSocket,
// SSE) and drains (files, syslog); archives; addons for addon drains. The logs, drains and addons folders
// do not know each other's wiring: it is here. Its area stops before the servers close (streams end).
import { join } from 'node:path';
import type { Db } from '../db/database.ts';
import type { Clock, ClockTimer } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { EmulatorConfig } from '../config/schema.ts';
import type { UpgradeTable } from '../http/ws.ts';
import type { ContainerRuntime } from '../runtime/runtime.ts';
import type { AppsService } from '../modules/apps/apps.service.ts';
import type { AppViewContext } from '../modules/apps/apps.view.ts';
import type { EventsService } from '../modules/events/events.service.ts';
import { createLogsStore } from '../modules/logs/logs.store.ts';
import { createLogsPipeline } from '../modules/logs/logs.pipeline.ts';
import { createLogsHub } from '../modules/logs/logs.hub.ts';
import { createLogsCollector } from '../modules/logs/logs.collector.ts';
import { createArchiver } from '../modules/logs/archives.ts';
import { createUrlSigner } from '../modules/logs/logs-url.ts';
import { loadSecretKey } from '../shared/secrets.ts';
import { createLogsService } from '../modules/logs/logs.service.ts';
import { logsRoutes } from '../modules/logs/logs.routes.ts';
import { registerLogsWebSocket } from '../modules/logs/logs.ws.ts';
import { createAddonsStore } from '../modules/addons/addons.store.ts';
import { createAddonsService } from '../modules/addons/addons.service.ts';
import { addonsRoutes } from '../modules/addons/addons.routes.ts';
import { databaseApiRoutes } from '../modules/addons/database-api.routes.ts';
import type { AddonServers } from '../modules/addons/addon-servers.ts';
import { addonServersRoutes } from '../modules/addons/addon-servers.routes.ts';
import { createAddonBackups } from '../modules/addons/addon-backups.ts';
import { createAddonBackupsStore } from '../modules/addons/addon-backups.store.ts';
import { databaseFeaturesRoutes } from '../modules/addons/database-features.routes.ts';
import { registerAddonLogsWebSocket } from '../modules/addons/addon-logs.ws.ts';
import { createDrainsStore } from '../modules/drains/drains.store.ts';
import { createDrainDispatcher } from '../modules/drains/drains.dispatcher.ts';
import { createDrainsService } from '../modules/drains/drains.service.ts';
import { drainsRoutes } from '../modules/drains/drains.routes.ts';
import type { Area, RouteGroup } from './area.ts';
import { createDatabasesWiring, type DatabasesWiringDeps } from './databases.ts';

export interface LogsModuleDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  config: EmulatorConfig;
  runtime: ContainerRuntime;
  instanceId: string;
  /** The data dir (signing key), null with --in-memory. */
  dataDir: string | null;
  /** Where archives and drain files go (the data dir, or a temp dir removed on stop). */
  stateDir: string;
  apps: AppsService;
  events: EventsService;
  view: AppViewContext;
  upgrades: UpgradeTable;
  apiUrl: () => string;
  /** Real addon servers (issue #15), handed to the addons service. */
  addonServers?: AddonServers;
  /** Projects, for a dedicated database's project (issue 22). */
  projects?: DatabasesWiringDeps['projects'];
}

export function createLogsModule(deps: LogsModuleDeps) {
  const { db, clock, logger, config } = deps;
  const cfg = config.logs;
  const store = createLogsStore(db);
  let storedSinceRotation = 0;
  let rotating = false;

  const pipeline = createLogsPipeline({
    db,
    store,
    clock,
    logger,
    queueMaxLines: cfg.queueMaxLines,
    batchMaxLines: cfg.batchMaxLines,
    routerLogsOn: (appId) => deps.apps.find(appId)?.router_logs === 1,
    // A flood rotates between maintenance ticks once a whole history's worth of lines came in: the
    // history stays under twice its bound, and each archive holds many lines (small, frequent archives
    // cost a rotation pass each and would push older archives out within one burst).
    // Rotation then runs in the background, a slice a tick (archives.ts), so live streams keep flowing.
    onStored: (n, lines) => {
      archiver.noteStored(lines);
      storedSinceRotation += n;
      if (storedSinceRotation >= cfg.historyMaxLines && !rotating && !archiver.busy()) {
        storedSinceRotation = 0;
        setImmediate(() => void archiver.rotateInBackground().catch((err) => logger.error({ err }, 'logs: rotation failed')));
      }
    },
  });
  const hub = createLogsHub({ logger, clock, pingMs: config.intervals.logsPingMs, maxLines: cfg.subscriberMaxLines });
  const archiver = createArchiver({ db, store, dir: join(deps.stateDir, 'logs-archives'), clock, logger, limits: cfg });
  const signer = createUrlSigner({ key: loadSecretKey(deps.dataDir, 'logs.key'), clock });
  const service = createLogsService({ apps: deps.apps, store, hub, signer, archiver, apiUrl: deps.apiUrl, limits: cfg });
  const collector = createLogsCollector({ runtime: deps.runtime, instanceId: deps.instanceId, pipeline, logger });

  const addons = createAddonsService({ db, store: createAddonsStore(db), apps: deps.apps, events: deps.events, clock, servers: deps.addonServers });
  const drainsStore = createDrainsStore(db);
  const dispatcher = createDrainDispatcher({
    dir: join(deps.stateDir, 'drains'),
    logger,
    options: cfg.drains,
    appName: (appId) => deps.apps.find(appId)?.name ?? appId,
    hostname: 'scalingo-emulator',
  });
  const drains = createDrainsService({ db, store: drainsStore, apps: deps.apps, addons, events: deps.events, dispatcher, clock, mode: cfg.drains.mode });

  // Open streams of someone who lost access to the app (removed collaborator, app deleted) end.
  deps.apps.addHooks({ afterAccessLost: (a) => void service.revoke(a.id) });
  pipeline.addSink(hub.sink);
  pipeline.addSink(dispatcher.sink);
  registerLogsWebSocket(deps.upgrades, service);

  const routes: RouteGroup[] = [logsRoutes({ logs: service, view: deps.view }), drainsRoutes({ drains }), addonsRoutes({ addons })];
  // Backups, users and logs of real addon servers in the database API (stand-ins fall through to its 400).
  const addonBackups = deps.addonServers
    ? createAddonBackups({ store: createAddonBackupsStore(db), servers: deps.addonServers, signer: createUrlSigner({ key: loadSecretKey(deps.dataDir, 'addons.key'), clock }), clock, logger, dir: join(deps.stateDir, 'addon-backups'), apiUrl: deps.apiUrl })
    : undefined;
  let addonFollowers: { closeAll(): void } | undefined;
  if (deps.addonServers && addonBackups) {
    const addonLogsSigner = createUrlSigner({ key: loadSecretKey(deps.dataDir, 'addon-logs.key'), clock });
    routes.push(databaseFeaturesRoutes({ addons, servers: deps.addonServers, backups: addonBackups, signer: addonLogsSigner, apiUrl: deps.apiUrl }));
    addonFollowers = registerAddonLogsWebSocket(deps.upgrades, { signer: addonLogsSigner, servers: deps.addonServers });
  }
  // Dedicated databases (/v1/databases); firewall rules, settings and logs archives in the database API (issue 22).
  const dbs = createDatabasesWiring({
    db, clock, region: config.region.name, apps: deps.apps, addons, servers: deps.addonServers, projects: deps.projects, view: deps.view,
    signer: createUrlSigner({ key: loadSecretKey(deps.dataDir, 'addon-logs-archives.key'), clock }), apiUrl: deps.apiUrl, backups: addonBackups, logger,
  });
  routes.push(...dbs.routes);
  // The database API of the addons (SCALINGO_DB_URL points at the emulator, prefix /api).
  routes.push(databaseApiRoutes({ addons, appName: (id) => deps.apps.find(id)?.name ?? id, servers: deps.addonServers, describe: dbs.databases.describe }));
  if (deps.addonServers) routes.push(addonServersRoutes({ addons, servers: deps.addonServers }));

  /** sweep: also remove what deleted apps left (full-table scans: on the timer only, not under a flood). */
  function maintain(sweep = true): void {
    if (rotating || !db.open) return;
    rotating = true;
    storedSinceRotation = 0;
    try {
      archiver.rotate({ sweep });
      if (sweep) dispatcher.prune(drainsStore.exists);
    } catch (err) {
      logger.error({ err }, 'logs: maintenance failed');
    } finally {
      rotating = false;
    }
  }

  /** The maintenance timer's pass: deleted apps' leftovers by index lookups, rotation in the background. */
  function maintainInBackground(): void {
    // A flood's rotation under way: this tick's work waits for the next one.
    if (rotating || !db.open || archiver.busy()) return;
    storedSinceRotation = 0;
    try {
      archiver.sweep();
      dispatcher.prune(drainsStore.exists);
    } catch (err) {
      logger.error({ err }, 'logs: maintenance failed');
    }
    archiver.rotateInBackground({ age: true }).catch((err) => logger.error({ err }, 'logs: maintenance failed'));
  }

  let timer: ClockTimer | null = null;

  async function start(): Promise<void> {
    drains.start();
    // On the emulator's clock: rotation by age follows a manual clock as it is advanced.
    timer = clock.setInterval(maintainInBackground, cfg.maintenanceMs);
    timer.unref();
    // With the engine down, collection starts by itself once it answers (the runtime's 'up').
    try {
      await collector.start();
    } catch (err) {
      logger.warn({ err }, 'logs: could not list the containers to follow');
    }
  }

  /** Before the HTTP server closes: streams end (else close() waits on them), then the rest drains. */
  async function stop(): Promise<void> {
    clock.clearInterval(timer);
    timer = null;
    hub.closeAll();
    addonFollowers?.closeAll();
    await collector.stop();
    await pipeline.idle();
    await archiver.stop();
    dispatcher.stop();
    await addonBackups?.idle();
    await dbs.restores?.idle();
  }
  const area: Area = { name: 'logs', routes, start, stop };

  return {
    area,
    routes,
    service,
    pipeline,
    hub,
    archiver,
    dispatcher,
    collector,
    drains,
    addons,
    /** Ingestion for other areas: `append(appId, 'router', line)`. False when dropped. */
    append: (appId: string, containerName: string, text: string, time?: number) => pipeline.append(appId, containerName, text, { timeMs: time }),
    maintain,

    start,
    stop,
  };
}

export type LogsModule = ReturnType<typeof createLogsModule>;
