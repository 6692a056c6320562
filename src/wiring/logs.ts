// Wiring of the logs area (issue #5): collection → pipeline → history (SQLite) → hub (WebSocket,
// SSE) and drains (files, syslog, addon drains); archives. The logs and drains folders do not know each
// other's wiring: it is here. Its unit stops before the servers close (streams end).
import { join } from 'node:path';
import { type AppHooks } from '../modules/apps/apps.service.ts';
import { createDrainDispatcher } from '../modules/drains/drains.dispatcher.ts';
import { createDrainsService } from '../modules/drains/drains.service.ts';
import { createDrainsStore } from '../modules/drains/drains.store.ts';
import { createArchiver } from '../modules/logs/archives.ts';
import { createLogsCollector } from '../modules/logs/logs.collector.ts';
import { createLogsHub } from '../modules/logs/logs.hub.ts';
import { createLogsPipeline } from '../modules/logs/logs.pipeline.ts';
import { logsRoutes } from '../modules/logs/logs.routes.ts';
import { createLogsService } from '../modules/logs/logs.service.ts';
import { createLogsStore } from '../modules/logs/logs.store.ts';
import { registerLogsWebSocket } from '../modules/logs/logs.ws.ts';
import { createUrlSigner } from '../modules/logs/logs-url.ts';
import { type ClockTimer } from '../shared/clock.ts';
import { loadSecretKey } from '../shared/secrets.ts';
import { type Unit } from './area.ts';
import { defineArea } from './define-area.ts';
import { lazyRoutes } from './lazy-routes.ts';

export const logsArea = defineArea({
  name: 'logs',
  folders: ['logs', 'drains'],
  needs: ['accounts', 'apps', 'addons'],
  build(shared, deps) {
    const { db, clock, logger, config } = shared;
    const { apps, view } = deps.apps;
    const { events } = deps.accounts;
    const apiUrl = () => shared.urls().api;
    const cfg = config.logs;
    const store = createLogsStore(db);
    const archiver = createArchiver({
      db,
      store,
      dir: join(shared.stateDir, 'logs-archives'),
      clock,
      logger,
      limits: cfg,
    });
    let storedSinceRotation = 0;
    let rotating = false;

    const pipeline = createLogsPipeline({
      db,
      store,
      clock,
      logger,
      queueMaxLines: cfg.queueMaxLines,
      batchMaxLines: cfg.batchMaxLines,
      routerLogsOn: (appId) => apps.find(appId)?.router_logs === 1,
      // A flood rotates between maintenance ticks once a whole history's worth of lines came in: the
      // history stays under twice its bound, and each archive holds many lines (small, frequent archives
      // cost a rotation pass each and would push older archives out within one burst).
      // Rotation then runs in the background, a slice a tick (archives.ts), so live streams keep flowing.
      onStored: (n, lines) => {
        archiver.noteStored(lines);
        storedSinceRotation += n;
        if (storedSinceRotation >= cfg.historyMaxLines && !rotating && !archiver.busy()) {
          storedSinceRotation = 0;
          setImmediate(
            () => void archiver.rotateInBackground().catch((err) => logger.error({ err }, 'logs: rotation failed')),
          );
        }
      },
    });
    const hub = createLogsHub({ logger, clock, pingMs: config.intervals.logsPingMs, maxLines: cfg.subscriberMaxLines });
    const signer = createUrlSigner({ key: loadSecretKey(shared.dataDir, 'logs.key'), clock });
    const service = createLogsService({ apps, store, hub, signer, archiver, apiUrl, limits: cfg });
    const collector = createLogsCollector({ runtime: shared.runtime, instanceId: shared.instanceId, pipeline, logger });

    const { addons } = deps.addons;
    const drainsStore = createDrainsStore(db);
    const dispatcher = createDrainDispatcher({
      dir: join(shared.stateDir, 'drains'),
      logger,
      options: cfg.drains,
      appName: (appId) => apps.find(appId)?.name ?? appId,
      hostname: 'scalingo-emulator',
    });
    const mode = cfg.drains.mode;
    const drains = createDrainsService({ db, store: drainsStore, apps, addons, events, dispatcher, clock, mode });

    // Open streams of someone who lost access to the app (removed collaborator, app deleted) end.
    const appHooks: AppHooks[] = [{ afterAccessLost: (a) => void service.revoke(a.id) }];
    pipeline.addSink(hub.sink);
    pipeline.addSink(dispatcher.sink);
    registerLogsWebSocket(shared.upgrades, service);

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
      await collector.stop();
      await pipeline.idle();
      await archiver.stop();
      dispatcher.stop();
    }
    const unit: Unit = {
      name: 'logs',
      routes: [
        logsRoutes({ logs: service, view }),
        lazyRoutes('drainsRoutes', () =>
          import('../modules/drains/drains.routes.ts').then((m) => m.drainsRoutes({ drains })),
        ),
      ],
      start,
      stop,
    };

    const api = {
      service,
      pipeline,
      hub,
      archiver,
      dispatcher,
      collector,
      drains,
      /** Ingestion for other areas: `append(appId, 'router', line)`. False when dropped. */
      append: (appId: string, containerName: string, text: string, time?: number) =>
        pipeline.append(appId, containerName, text, { timeMs: time }),
      maintain,
    };
    return { api, units: [unit], appHooks };
  },
});
