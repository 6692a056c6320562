// Wiring of the autoscalers area: the API, and the engine that scales after each stats round as the
// platform's autoscaler user (routes only: the engine runs on the monitoring area's sample rounds).

import { createAutoscalerEngine } from '../modules/autoscalers/autoscaler-engine.ts';
import { AUTOSCALER_USER_ID, createAutoscalersService } from '../modules/autoscalers/autoscalers.service.ts';
import { createAutoscalersStore } from '../modules/autoscalers/autoscalers.store.ts';
import { defined } from '../shared/defined.ts';
import { defineArea } from './define-area.ts';
import { lazyRoutes } from './lazy-routes.ts';

export const autoscalersArea = defineArea({
  name: 'autoscalers',
  folders: ['autoscalers'],
  needs: ['accounts', 'apps', 'containers', 'monitoring'],
  build(shared, deps) {
    const { userById } = deps.accounts.auth;
    const { events } = deps.accounts;
    const { apps } = deps.apps;
    const { containers, containersStore, orchestrator } = deps.containers;
    const cfg = shared.config.autoscalers;
    const formation = (appId: string) => containersStore.formation(appId);
    const store = createAutoscalersStore(shared.db);
    const service = createAutoscalersService({
      db: shared.db,
      store,
      apps,
      events,
      clock: shared.clock,
      // The types of the formation and of the app's last release (none when never deployed).
      knownTypes: (a) => {
        const released = Object.keys(orchestrator.release(a)?.processTypes ?? {});
        return [...new Set([...formation(a.id).map((f) => f.type), ...released])];
      },
      userById,
      billingUrl: deps.apps.billingUrl,
    });
    // A user's manual scale of a type disables its autoscaler.
    events.onRecord(service.onEvent);
    const autoscalerUser = () => defined(userById(AUTOSCALER_USER_ID), 'the autoscaler user');
    const engine = createAutoscalerEngine({
      store,
      traffic: deps.monitoring.traffic,
      formation,
      findApp: apps.find,
      scale: (a, type, amount) => void containers.scale(autoscalerUser(), a, [{ name: type, amount }]),
      logger: shared.logger,
      upCooldownMs: cfg.scaleUpCooldownMs,
      downCooldownMs: cfg.scaleDownCooldownMs,
      rounds: cfg.consecutiveRounds,
    });
    deps.monitoring.onRound((rows, now) => engine.evaluate(rows, now));
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
  },
});
