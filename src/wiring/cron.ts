// Wiring of the Scalingo Scheduler: cron.json read at build time, GET cron_tasks, and the schedules that
// run the jobs as detached one-offs of the platform user. The containers area hands `recordFromBuild`
// to the deployments; the one-off area, built later, runs the jobs.

import { PLATFORM_USER_ID } from '../modules/alerts/alert-engine.ts';
import { createCronService } from '../modules/cron/cron.service.ts';
import { createCronStore } from '../modules/cron/cron.store.ts';
import { defined } from '../shared/defined.ts';
import { type Unit } from './area.ts';
import { defineArea } from './define-area.ts';
import { lazyRoutes } from './lazy-routes.ts';

export const cronArea = defineArea({
  name: 'cron',
  folders: ['cron'],
  needs: ['accounts', 'apps'],
  later: ['one-off'],
  build(shared, deps) {
    const cronConfig = shared.config.cron;
    const { auth, events } = deps.accounts;
    const oneOff = () => deps.late('one-off').service;
    const service = createCronService({
      store: createCronStore(shared.db),
      apps: deps.apps.apps,
      clock: shared.clock,
      logger: shared.logger,
      rules: {
        maxJobs: cronConfig.maxJobs,
        minIntervalMs: cronConfig.minIntervalMinutes * 60_000,
        secondsField: cronConfig.secondsField,
        sizes: shared.config.containerSizes.map((z) => z.name),
      },
      maxRunMs: cronConfig.maxRunMinutes * 60_000,
      syncMs: cronConfig.syncMs,
      runUser: () => defined(auth.userById(PLATFORM_USER_ID), 'the platform user'),
      runOneOff: (user, app, input) => oneOff().run(user, app, input),
      stopOneOff: (user, app, id) => oneOff().stop(user, app, id),
    });
    // Deployments and app deletions change the schedules at once.
    events.onRecord(service.onEvent);
    const unit: Unit = {
      name: 'cron',
      routes: [
        lazyRoutes('cronRoutes', () =>
          import('../modules/cron/cron.routes.ts').then((m) => m.cronRoutes({ cron: service })),
        ),
      ],
      start: () => service.start(),
      stop: () => service.stop(),
    };
    return { api: { service, recordFromBuild: service.recordFromBuild }, units: [unit] };
  },
});
