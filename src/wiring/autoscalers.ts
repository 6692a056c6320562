// Wiring of the autoscalers area: the API, and the engine that scales after each stats round as the
// platform's autoscaler user (routes only: the engine runs on the monitoring area's sample rounds).
import { defined } from '../shared/defined.ts';
import { createAutoscalersStore } from '../modules/autoscalers/autoscalers.store.ts';
import { AUTOSCALER_USER_ID, createAutoscalersService } from '../modules/autoscalers/autoscalers.service.ts';
import { createAutoscalerEngine } from '../modules/autoscalers/autoscaler-engine.ts';
import type { Shared } from './area.ts';
import type { Accounts } from './accounts.ts';
import type { Apps } from './apps.ts';
import type { Containers } from './containers.ts';
import type { Monitoring } from './monitoring.ts';
import { defineArea } from './define-area.ts';
import { lazyRoutes } from './lazy-routes.ts';

export const autoscalersArea = defineArea({
  name: 'autoscalers',
  folders: ['autoscalers'],
  needs: ['accounts', 'apps', 'containers', 'monitoring'],
  build: (s, deps) => buildAutoscalers(s, deps),
});

interface AutoscalersNeeds {
  accounts: Pick<Accounts, 'auth' | 'events'>;
  apps: Pick<Apps, 'apps' | 'billingUrl'>;
  containers: Pick<Containers, 'containers' | 'containersStore' | 'orchestrator'>;
  monitoring: Pick<Monitoring, 'onRound' | 'traffic'>;
}

function buildAutoscalers(s: Shared, needs: AutoscalersNeeds) {
  const { userById } = needs.accounts.auth;
  const { events } = needs.accounts;
  const { apps } = needs.apps;
  const { containers, containersStore, orchestrator } = needs.containers;
  const cfg = s.config.autoscalers;
  const formation = (appId: string) => containersStore.formation(appId);
  const store = createAutoscalersStore(s.db);
  const service = createAutoscalersService({
    db: s.db,
    store,
    apps,
    events,
    clock: s.clock,
    // The types of the formation and of the app's last release (none when never deployed).
    knownTypes: (a) => {
      const released = Object.keys(orchestrator.release(a)?.processTypes ?? {});
      return [...new Set([...formation(a.id).map((f) => f.type), ...released])];
    },
    userById,
    billingUrl: needs.apps.billingUrl,
  });
  // A user's manual scale of a type disables its autoscaler.
  events.onRecord(service.onEvent);
  const autoscalerUser = () => defined(userById(AUTOSCALER_USER_ID), 'the autoscaler user');
  const engine = createAutoscalerEngine({
    store,
    traffic: needs.monitoring.traffic,
    formation,
    findApp: apps.find,
    scale: (a, type, amount) => void containers.scale(autoscalerUser(), a, [{ name: type, amount }]),
    logger: s.logger,
    upCooldownMs: cfg.scaleUpCooldownMs,
    downCooldownMs: cfg.scaleDownCooldownMs,
    rounds: cfg.consecutiveRounds,
  });
  needs.monitoring.onRound((rows, now) => engine.evaluate(rows, now));
  return {
    api: { service, engine },
    units: [
      {
        name: 'autoscalers',
        routes: [
          lazyRoutes('autoscalersRoutes', () =>
            import('../modules/autoscalers/autoscalers.routes.ts').then((m) =>
              m.autoscalersRoutes({ autoscalers: service }),
            ),
          ),
        ],
      },
    ],
  };
}

export type Autoscalers = ReturnType<typeof buildAutoscalers>['api'];
