// Users and what they own outside apps: accounts and tokens (auth), SSH keys, the events feed's store.
// Built first among the services: every other area finds users through `auth`, records through `events`.

import { createAuthService } from '../modules/auth/auth.service.ts';
import { createAuthStore } from '../modules/auth/auth.store.ts';
import { createEventsService } from '../modules/events/events.service.ts';
import { createEventsStore } from '../modules/events/events.store.ts';
import { createKeysService } from '../modules/keys/keys.service.ts';
import { createKeysStore } from '../modules/keys/keys.store.ts';
import { defined } from '../shared/defined.ts';
import { loadSecretKey } from '../shared/secrets.ts';
import { type Unit } from './area.ts';
import { defineArea } from './define-area.ts';
import { lazyRoutes } from './lazy-routes.ts';

export const accountsArea = defineArea({
  name: 'accounts',
  folders: ['auth', 'events', 'keys'],
  needs: [],
  build(shared) {
    const { db, clock, config, logger } = shared;
    const auth = createAuthService({
      db,
      store: createAuthStore(db),
      clock,
      jwtSecret: loadSecretKey(shared.dataDir, 'jwt.key'),
      bearerTtlSeconds: config.auth.bearerTtlSeconds,
    });
    auth.syncUsers(config.users);
    const firstUser = defined(auth.userByLogin(config.users[0].username), 'the first configured user');
    /** Ready-to-use API token of the first configured user, replaced at each start. */
    const startupToken = config.users[0].apiTokens[0] ?? auth.rotateStartupToken(firstUser.id);
    const events = createEventsService({ store: createEventsStore(db), clock, userById: auth.userById });
    const { userById, userByLogin } = auth;
    const keys = createKeysService({ db, store: createKeysStore(db), events, clock, logger, userById, userByLogin });

    const region = { regionName: config.region.name, regionDisplayName: config.region.displayName };
    const authUnit: Unit = {
      name: 'auth',
      routes: [
        lazyRoutes('authRoutes', () =>
          import('../modules/auth/auth.routes.ts').then((m) => m.authRoutes({ auth, urls: shared.urls, ...region })),
        ),
      ],
      // The configured passwords are hashed in the background: written before the database closes.
      stop: () => auth.passwordsReady(),
    };
    const keysUnit: Unit = {
      name: 'keys',
      routes: [
        lazyRoutes('keysRoutes', () => import('../modules/keys/keys.routes.ts').then((m) => m.keysRoutes({ keys }))),
      ],
      // What the git endpoint authenticates with: the configured keys of each user.
      start: () => keys.syncConfigured(config.users),
    };
    return { api: { auth, events, keys, startupToken }, units: [authUnit, keysUnit] };
  },
});
