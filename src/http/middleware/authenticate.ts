import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.ts';
import type { AuthService } from '../../modules/auth/auth.service.ts';

// Routes reachable without a principal: the exchange authenticates with its own basic scheme;
// the event catalogues are fetched without credentials by the official npm client.
const PUBLIC = new Set(['POST /v1/tokens/exchange', 'GET /v1/event_categories', 'GET /v1/event_types', 'GET /v1/features/container_sizes', 'GET /v1/notification_platforms', 'GET /v1/notification_platforms/search']);
// The addon catalogue is public too (go-scalingo sends NoAuth when its client is not authenticated).
const PUBLIC_PATTERN = /^GET \/v1\/addon_providers(\/[A-Za-z0-9_.-]{1,100}\/plans)?$/;
// The auth service's token routes also take HTTP basic with a username and password.
const PASSWORD_OK = /^\/v1\/tokens(\/|$)/;

/** Every /v1 route is authenticated; the principal is set on the context for the routes. */
export function authenticate(auth: AuthService): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const route = `${c.req.method} ${c.req.path}`;
    if (!PUBLIC.has(route) && !PUBLIC_PATTERN.test(route)) {
      c.set('principal', await auth.authenticate(c.req.header('authorization'), { allowPassword: PASSWORD_OK.test(c.req.path) }));
    }
    await next();
  };
}
