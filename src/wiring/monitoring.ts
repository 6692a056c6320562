import { join } from 'node:path';
import type { Db } from '../db/database.ts';
import type { EmulatorConfig } from '../config/schema.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { UserRow } from '../modules/auth/principal.ts';
import type { ContainerRuntime } from '../runtime/runtime.ts';
import type { AppsService } from '../modules/apps/apps.service.ts';
import type { EventsService } from '../modules/events/events.service.ts';
import { createStatsStore } from '../modules/stats/stats.store.ts';
import { createRouterRecorder, type RouterRequestInput } from '../modules/stats/router-records.ts';
import type { SampleRow } from '../modules/stats/stats.store.ts';
import { createSampler } from '../modules/stats/sampler.ts';
import { createStatsService } from '../modules/stats/stats.service.ts';
import { createRecommended } from '../modules/stats/recommended.ts';
import { statsRoutes } from '../modules/stats/stats.routes.ts';
import { createAlertsStore } from '../modules/alerts/alerts.store.ts';
import { createAlertsService } from '../modules/alerts/alerts.service.ts';
import { alertsRoutes } from '../modules/alerts/alerts.routes.ts';
import { createAlertEngine } from '../modules/alerts/alert-engine.ts';
import { createNotifiersStore } from '../modules/notifiers/notifiers.store.ts';
import { createNotifiersService } from '../modules/notifiers/notifiers.service.ts';
import { notifiersRoutes } from '../modules/notifiers/notifiers.routes.ts';
import { createDelivery } from '../modules/notifiers/delivery.ts';
import type { Area, RouteGroup } from './area.ts';

export interface MonitoringDeps {
  db: Db;
  runtime: ContainerRuntime;
  apps: AppsService;
  events: EventsService;
  clock: Clock;
  logger: Logger;
  config: Pick<EmulatorConfig, 'intervals' | 'stats' | 'notifiers'>;
  instanceId: string;
  /** The data dir, or the temp dir of an --in-memory run (removed on stop): the e-mail outbox lives there. */
  stateDir: string;
  userById: (id: string) => UserRow | undefined;
  /** The app's formation, when known (known container types and indexes). */
  formation?: (appId: string) => { type: string; amount: number }[];
}

/**
 * Stats, metrics, recommended values, alerts and notifiers, wired together: the sampler stores samples
 * and hands each round to the alert engine, which records `alert` events sent through the notifiers.
 * The stats, alerts and notifiers folders do not know each other's wiring: it is here. Two areas: the
 * monitoring one stops late (notifications of the work that ends at stop still go out), the sampler
 * starts last and stops first.
 */
export function createMonitoring(deps: MonitoringDeps) {
  const { db, clock, logger, config } = deps;
  const statsStore = createStatsStore(db);
  const recorder = createRouterRecorder({ db, store: statsStore, logger });
  const delivery = createDelivery({
    logger,
    clock,
    outboxFile: join(deps.stateDir, 'outbox', 'emails.log'),
    timeoutMs: config.notifiers.webhookTimeoutMs,
    retries: config.notifiers.webhookRetries,
    backoffMs: config.notifiers.webhookBackoffMs,
    userById: deps.userById,
  });
  const notifiers = createNotifiersService({ db, store: createNotifiersStore(db), apps: deps.apps, events: deps.events, clock, delivery, userById: deps.userById });
  // Other consumers of each stored round (the autoscalers), after the alert engine.
  const roundListeners: ((rows: SampleRow[], now: number) => void | Promise<void>)[] = [];
  const alertsStore = createAlertsStore(db);
  const alerts = createAlertsService({ db, store: alertsStore, apps: deps.apps, events: deps.events, notifiers, clock });
  const engine = createAlertEngine({ alerts: alertsStore, stats: statsStore, recorder, notifiers, events: deps.events, findApp: deps.apps.find, logger });
  const sampler = createSampler({
    db,
    store: statsStore,
    runtime: deps.runtime,
    clock,
    logger,
    instanceId: deps.instanceId,
    intervalMs: config.intervals.statsSampleMs,
    concurrency: config.stats.concurrency,
    retentionMs: config.stats.retentionHours * 3_600_000,
    onRound: async (rows, now) => {
      engine.evaluate(rows, now);
      for (const l of roundListeners) await l(rows, now);
    },
  });
  const stats = createStatsService({
    store: statsStore,
    recorder,
    sampler,
    runtime: deps.runtime,
    clock,
    instanceId: deps.instanceId,
    sampleMs: config.intervals.statsSampleMs,
    maxPoints: config.stats.maxPoints,
    concurrency: config.stats.concurrency,
    formation: deps.formation,
  });
  const recommended = createRecommended({ store: statsStore, recorder, stats, clock, formation: deps.formation });
  const unsubscribe = deps.events.onRecord(notifiers.onEvent);

  const routes: RouteGroup[] = [statsRoutes({ stats, recommended }), alertsRoutes({ alerts }), notifiersRoutes({ notifiers })];

  async function stop(): Promise<void> {
    unsubscribe();
    await sampler.stop();
    recorder.stop();
    await delivery.stop();
  }
  const areas = {
    monitoring: { name: 'monitoring', routes, stop } satisfies Area,
    sampler: { name: 'stats-sampler', start: () => sampler.start(), stop: () => sampler.stop() } satisfies Area,
  };

  return {
    areas,
    routes,
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
    start(): void {
      sampler.start();
    },
    stop,
  };
}

export type Monitoring = ReturnType<typeof createMonitoring>;
