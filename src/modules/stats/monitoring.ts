import { join } from 'node:path';
import type { Hono } from 'hono';
import type { Db } from '../../db/database.ts';
import type { EmulatorConfig } from '../../config/schema.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/logger.ts';
import type { AppEnv } from '../../http/env.ts';
import type { UserRow } from '../auth/principal.ts';
import type { ContainerRuntime } from '../../runtime/runtime.ts';
import type { AppsService } from '../apps/apps.service.ts';
import type { EventsService } from '../events/events.service.ts';
import { createStatsStore } from './stats.store.ts';
import { createRouterRecorder, type RouterRequestInput } from './router-records.ts';
import type { SampleRow } from './stats.store.ts';
import { createSampler } from './sampler.ts';
import { createStatsService } from './stats.service.ts';
import { createRecommended } from './recommended.ts';
import { statsRoutes } from './stats.routes.ts';
import { createAlertsStore } from '../alerts/alerts.store.ts';
import { createAlertsService } from '../alerts/alerts.service.ts';
import { alertsRoutes } from '../alerts/alerts.routes.ts';
import { createAlertEngine } from '../alerts/alert-engine.ts';
import { createNotifiersStore } from '../notifiers/notifiers.store.ts';
import { createNotifiersService } from '../notifiers/notifiers.service.ts';
import { notifiersRoutes } from '../notifiers/notifiers.routes.ts';
import { createDelivery } from '../notifiers/delivery.ts';

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
 * The composition root mounts `routes`, connects `recordRouterRequest` to the router and calls start/stop.
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

  const routes: Hono<AppEnv>[] = [statsRoutes({ apps: deps.apps, stats, recommended }), alertsRoutes({ alerts }), notifiersRoutes({ notifiers })];

  return {
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
    async stop(): Promise<void> {
      unsubscribe();
      await sampler.stop();
      recorder.stop();
      await delivery.stop();
    },
  };
}

export type Monitoring = ReturnType<typeof createMonitoring>;
