import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.ts';
import type { AuthService } from '../../modules/auth/auth.service.ts';
import type { RouteAuth } from '../api-routes.ts';

/**
 * Every /v1 route is authenticated; the principal is set on the context for the routes. Routes say
 * on their declaration (api-routes.ts) when they are public or also take a username and password.
 */
// Until every area declares its routes (api-routes.ts), the public routes of undeclared groups.
const LEGACY_PUBLIC = new Set(['GET /v1/features/container_sizes', 'GET /v1/notification_platforms', 'GET /v1/notification_platforms/search']);
const LEGACY_PUBLIC_PATTERN = /^GET \/v1\/addon_providers(\/[A-Za-z0-9_.-]{1,100}\/plans)?$/;

export function authenticate(auth: AuthService, authOf: (method: string, path: string) => RouteAuth | undefined): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const route = `${c.req.method} ${c.req.path}`;
    const kind = authOf(c.req.method, c.req.path) ?? (LEGACY_PUBLIC.has(route) || LEGACY_PUBLIC_PATTERN.test(route) ? 'public' : undefined);
    if (kind !== 'public') {
      c.set('principal', await auth.authenticate(c.req.header('authorization'), { allowPassword: kind === 'password' }));
    }
    await next();
  };
}
