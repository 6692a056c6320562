// Stats, metrics, recommended values, alerts and notifiers, wired together: the sampler stores samples and hands
// each round to the alert engine, which records `alert` events sent through the notifiers. The stats, alerts and
// notifiers folders do not know each other's wiring: it is here. Two units: the monitoring one stops late
// (notifications of the work that ends at stop still go out), the sampler starts last and stops first.
import { join } from 'node:path';
import { createAlertEngine } from '../modules/alerts/alert-engine.ts';
import { createAlertsService } from '../modules/alerts/alerts.service.ts';
import { createAlertsStore } from '../modules/alerts/alerts.store.ts';
import { createDelivery } from '../modules/notifiers/delivery.ts';
import { createNotifiersService } from '../modules/notifiers/notifiers.service.ts';
import { createNotifiersStore } from '../modules/notifiers/notifiers.store.ts';
import { createRecommended } from '../modules/stats/recommended.ts';
import { createRouterRecorder, type RouterRequestInput } from '../modules/stats/router-records.ts';
import { createSampler } from '../modules/stats/sampler.ts';
import { createStatsService } from '../modules/stats/stats.service.ts';
import { createStatsStore, type SampleRow } from '../modules/stats/stats.store.ts';
import { type Unit } from './area.ts';
import { defineArea } from './define-area.ts';
import { lazyRoutes } from './lazy-routes.ts';

export const monitoringArea = defineArea({
  name: 'monitoring',
  folders: ['stats', 'alerts', 'notifiers'],
  needs: ['accounts', 'apps', 'containers'],
  build(shared, deps) {
    const { db, clock, logger, config } = shared;
    const { events, auth } = deps.accounts;
    const { apps } = deps.apps;
    const { userById } = auth;
    /** The app's formation (known container types and indexes). */
    const formation = (appId: string) => deps.containers.containersStore.formation(appId);
    const statsStore = createStatsStore(db);
    const recorder = createRouterRecorder({ db, store: statsStore, logger });
    const delivery = createDelivery({
      logger,
      clock,
      outboxFile: join(shared.stateDir, 'outbox', 'emails.log'),
      timeoutMs: config.notifiers.webhookTimeoutMs,
      retries: config.notifiers.webhookRetries,
      backoffMs: config.notifiers.webhookBackoffMs,
      userById,
    });
    const notifiersStore = createNotifiersStore(db);
    const notifiers = createNotifiersService({ db, store: notifiersStore, apps, events, clock, delivery, userById });
    // Other consumers of each stored round (the autoscalers), after the alert engine.
    const roundListeners: ((rows: SampleRow[], now: number) => void | Promise<void>)[] = [];
    const alertsStore = createAlertsStore(db);
    const alerts = createAlertsService({ db, store: alertsStore, apps, events, notifiers, clock });
    const engine = createAlertEngine({
      alerts: alertsStore,
      stats: statsStore,
      recorder,
      notifiers,
      events,
      findApp: apps.find,
      logger,
    });
    const sampler = createSampler({
      db,
      store: statsStore,
      runtime: shared.runtime,
      clock,
      logger,
      instanceId: shared.instanceId,
      intervalMs: config.intervals.statsSampleMs,
      concurrency: config.stats.concurrency,
      retentionMs: config.stats.retentionHours * 3_600_000,
      onRound: async (rows, now) => {
        engine.evaluate(rows, now);
        for (const listener of roundListeners) await listener(rows, now);
      },
    });
    const stats = createStatsService({
      store: statsStore,
      recorder,
      sampler,
      runtime: shared.runtime,
      clock,
      instanceId: shared.instanceId,
      sampleMs: config.intervals.statsSampleMs,
      maxPoints: config.stats.maxPoints,
      concurrency: config.stats.concurrency,
      formation,
    });
    const recommended = createRecommended({ store: statsStore, recorder, stats, clock, formation });
    const unsubscribe = events.onRecord(notifiers.onEvent);

    async function stop(): Promise<void> {
      unsubscribe();
      await sampler.stop();
      recorder.stop();
      await delivery.stop();
    }
    const units: Unit[] = [
      {
        name: 'monitoring',
        routes: [
          lazyRoutes('statsRoutes', () =>
            import('../modules/stats/stats.routes.ts').then((m) => m.statsRoutes({ stats, recommended })),
          ),
          lazyRoutes('alertsRoutes', () =>
            import('../modules/alerts/alerts.routes.ts').then((m) => m.alertsRoutes({ alerts })),
          ),
          lazyRoutes('notifiersRoutes', () =>
            import('../modules/notifiers/notifiers.routes.ts').then((m) => m.notifiersRoutes({ notifiers })),
          ),
        ],
        stop,
      },
      { name: 'stats-sampler', start: () => sampler.start(), stop: () => sampler.stop() },
    ];

    const api = {
      /** The sample rounds' timer (runs on the emulator's clock). */
      sampler,
      stats,
      alerts,
      notifiers,
      engine,
      /** `<stateDir>/outbox/emails.log`: one JSON line per e-mail notification. */
      outboxFile: delivery.outboxFile,
      /** The router's per-request hook (batched writes). */
      recordRouterRequest: (rec: RouterRequestInput) => recorder.record(rec),
      /** Adds a consumer of each sample round (after the alert engine). */
      onRound(listener: (rows: SampleRow[], now: number) => void | Promise<void>): void {
        roundListeners.push(listener);
      },
      /** Router traffic of an app in (from, to], pending router records written first. */
      traffic: {
        window(appId: string, from: number, to: number) {
          recorder.flush();
          return statsStore.window(appId, from, to);
        },
        windowDurations: (appId: string, from: number, to: number) => statsStore.windowDurations(appId, from, to),
      },
      /** One sample round now (tests drive the engine with a manual clock this way). */
      sampleOnce: () => sampler.sampleOnce(),
      /** Resolves when queued e-mail lines are written. */
      drainOutbox: () => delivery.drain(),
    };
    return { api, units };
  },
});
