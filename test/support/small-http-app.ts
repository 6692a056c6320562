// An HTTP app (src/http/app.ts) around a few test routes, without an emulator: one user, who authenticates with
// `Authorization: Bearer ok`, and the apps of a map by name. For the route declaration tests.

import { type ApiRoutes } from '../../src/http/api-routes.ts';
import { createHttpApp, type HttpAppDeps } from '../../src/http/app.ts';
import { ApiError } from '../../src/http/errors.ts';
import { type AuthService } from '../../src/modules/auth/auth.service.ts';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';

export const TEST_USER = {
  id: 'us-1',
  username: 'u',
  email: 'u@example.test',
  fullname: 'U',
  payment_method: 1,
  created_at: 0,
};

export const bearerOkAuth = {
  authenticate: async (header: string | undefined) => {
    if (header !== 'Bearer ok') throw ApiError.unauthorized();
    return { user: TEST_USER, tokenId: null };
  },
  // No bearer is cached here: every request goes through authenticate() above.
  cachedPrincipal: () => undefined,
} as unknown as AuthService;

/**
 * The app serving `routes`; `apps` are what `/v1/apps/:app/…` routes load (any other name is a 404 of the app).
 * `overrides` replace any of these dependencies (another authentication, no response conformance check).
 */
export function smallHttpApp(
  routes: ApiRoutes[],
  apps: Map<string, { id: string; name: string }> = new Map(),
  overrides: Partial<HttpAppDeps> = {},
) {
  return createHttpApp({
    logger: createLogger('silent'),
    wallClock: systemClock,
    auth: bearerOkAuth,
    bodyLimitBytes: 1024,
    rateLimit: { enabled: false, perMinute: 0 },
    appAccess: ((_u: unknown, key: string) => {
      const app = apps.get(key);
      if (!app) throw ApiError.notFound('app');
      return app;
    }) as unknown as HttpAppDeps['appAccess'],
    validateResponses: true,
    routes,
    ...overrides,
  });
}
