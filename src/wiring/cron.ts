// Wiring of the Scalingo Scheduler: cron.json read at build time, GET cron_tasks, and the schedules that
// run the jobs as detached one-offs of the platform user. emulator.ts builds it with one call, lists its
// area, and passes `recordFromBuild` to the deployments.
import type { Db } from '../db/database.ts';
import type { EmulatorConfig } from '../config/schema.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { UserRow } from '../modules/auth/principal.ts';
import { defined } from '../shared/defined.ts';
import type { AppsService } from '../modules/apps/apps.service.ts';
import type { EventsService } from '../modules/events/events.service.ts';
import type { OneOffService } from '../modules/one-off/one-off.service.ts';
import { PLATFORM_USER_ID } from '../modules/alerts/alert-engine.ts';
import { createCronStore } from '../modules/cron/cron.store.ts';
import { createCronService } from '../modules/cron/cron.service.ts';
import { cronRoutes } from '../modules/cron/cron.routes.ts';
import type { Area } from './area.ts';

export interface CronModuleDeps {
  db: Db;
  apps: AppsService;
  events: EventsService;
  clock: Clock;
  logger: Logger;
  config: Pick<EmulatorConfig, 'cron' | 'containerSizes'>;
  userById: (id: string) => UserRow | undefined;
  /** Late-bound: the one-off area is built after the deployments that feed this module. */
  oneOff: () => Pick<OneOffService, 'run' | 'stop'>;
}

export function createCronModule(deps: CronModuleDeps) {
  const c = deps.config.cron;
  const service = createCronService({
    store: createCronStore(deps.db),
    apps: deps.apps,
    clock: deps.clock,
    logger: deps.logger,
    rules: { maxJobs: c.maxJobs, minIntervalMs: c.minIntervalMinutes * 60_000, secondsField: c.secondsField, sizes: deps.config.containerSizes.map((s) => s.name) },
    maxRunMs: c.maxRunMinutes * 60_000,
    syncMs: c.syncMs,
    runUser: () => defined(deps.userById(PLATFORM_USER_ID), 'the platform user'),
    runOneOff: (user, app, input) => deps.oneOff().run(user, app, input),
    stopOneOff: (user, app, id) => deps.oneOff().stop(user, app, id),
  });
  // Deployments and app deletions change the schedules at once.
  deps.events.onRecord(service.onEvent);
  const routes = cronRoutes({ cron: service });
  const area: Area = { name: 'cron', routes: [routes], start: () => service.start(), stop: () => service.stop() };
  return {
    area,
    service,
    routes,
    recordFromBuild: service.recordFromBuild,
    start: service.start,
    stop: service.stop,
  };
}

export type CronModule = ReturnType<typeof createCronModule>;
