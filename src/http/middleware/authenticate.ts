import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.ts';
import type { AuthService } from '../../modules/auth/auth.service.ts';
import type { RouteAuth } from '../api-routes.ts';

/**
 * Every /v1 route is authenticated; the principal is set on the context for the routes. Routes say
 * on their declaration (api-routes.ts) when they are public or also take a username and password.
 */
export function authenticate(auth: AuthService, authOf: (method: string, path: string) => RouteAuth | undefined): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const kind = authOf(c.req.method, c.req.path);
    if (kind !== 'public') {
      c.set('principal', await auth.authenticate(c.req.header('authorization'), { allowPassword: kind === 'password' }));
    }
    await next();
  };
}
