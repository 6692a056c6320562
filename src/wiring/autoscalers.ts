// Wiring of the autoscalers area: the API, and the engine that scales after each stats round as the
// platform's autoscaler user. emulator.ts builds it with one call and lists its area (routes only:
// the engine runs on the monitoring area's sample rounds).
import type { Db } from '../db/database.ts';
import type { EmulatorConfig } from '../config/schema.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { UserRow } from '../modules/auth/principal.ts';
import { defined } from '../shared/defined.ts';
import type { AppsService } from '../modules/apps/apps.service.ts';
import type { AppRow } from '../modules/apps/apps.store.ts';
import type { EventsService } from '../modules/events/events.service.ts';
import type { ContainersService } from '../modules/containers/containers.service.ts';
import type { Monitoring } from './monitoring.ts';
import { createAutoscalersStore } from '../modules/autoscalers/autoscalers.store.ts';
import { AUTOSCALER_USER_ID, createAutoscalersService } from '../modules/autoscalers/autoscalers.service.ts';
import { autoscalersRoutes } from '../modules/autoscalers/autoscalers.routes.ts';
import { createAutoscalerEngine } from '../modules/autoscalers/autoscaler-engine.ts';
import type { Area } from './area.ts';

export interface AutoscalersModuleDeps {
  db: Db;
  apps: AppsService;
  events: EventsService;
  clock: Clock;
  logger: Logger;
  config: Pick<EmulatorConfig, 'autoscalers'>;
  containers: Pick<ContainersService, 'scale'>;
  monitoring: Pick<Monitoring, 'onRound' | 'traffic'>;
  /** The app's formation (type and amount per process type). */
  formation: (appId: string) => { type: string; amount: number }[];
  /** Process types of the app's last release (empty when never deployed). */
  releaseTypes: (app: AppRow) => string[];
  userById: (id: string) => UserRow | undefined;
  billingUrl: () => string;
}

export function createAutoscalersModule(deps: AutoscalersModuleDeps) {
  const store = createAutoscalersStore(deps.db);
  const service = createAutoscalersService({
    db: deps.db,
    store,
    apps: deps.apps,
    events: deps.events,
    clock: deps.clock,
    knownTypes: (a) => [...new Set([...deps.formation(a.id).map((f) => f.type), ...deps.releaseTypes(a)])],
    userById: deps.userById,
    billingUrl: deps.billingUrl,
  });
  // A user's manual scale of a type disables its autoscaler.
  deps.events.onRecord(service.onEvent);
  const engine = createAutoscalerEngine({
    store,
    traffic: deps.monitoring.traffic,
    formation: deps.formation,
    findApp: deps.apps.find,
    scale: (a, type, amount) => void deps.containers.scale(defined(deps.userById(AUTOSCALER_USER_ID), 'the autoscaler user'), a, [{ name: type, amount }]),
    logger: deps.logger,
    upCooldownMs: deps.config.autoscalers.scaleUpCooldownMs,
    downCooldownMs: deps.config.autoscalers.scaleDownCooldownMs,
    rounds: deps.config.autoscalers.consecutiveRounds,
  });
  deps.monitoring.onRound((rows, now) => engine.evaluate(rows, now));
  const routes = autoscalersRoutes({ autoscalers: service });
  const area: Area = { name: 'autoscalers', routes: [routes] };
  return { service, engine, routes, area };
}
