// The HTTP app of the API port: the middleware chain (src/http/app.ts) and the route groups of every
// unit, mounted in LIFECYCLE order. Built last, once every other area gave its units; the servers area
// serves it.
import { createHttpApp } from '../http/app.ts';
import { VERSION } from '../version.ts';
import { defineArea } from './define-area.ts';

export const httpArea = defineArea({
  name: 'http',
  folders: [],
  needs: ['accounts', 'apps'],
  build(shared, deps) {
    const { config } = shared;
    const app = createHttpApp({
      logger: shared.logger,
      wallClock: shared.wallClock,
      faults: shared.faults,
      auth: deps.accounts.auth,
      bodyLimitBytes: config.bodyLimitBytes,
      rateLimit: config.rateLimit,
      appAccess: deps.apps.apps.visibleApp,
      validateResponses: config.validateResponses,
      version: VERSION,
      routes: deps.routes(),
    });
    return { api: { app } };
  },
});
