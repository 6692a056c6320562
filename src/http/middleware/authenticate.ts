import { type Context, type MiddlewareHandler, type Next } from 'hono';
import { type AuthService } from '../../modules/auth/auth.service.ts';
import { type RouteAuth } from '../api-routes.ts';
import { type AppEnv } from '../env.ts';
import { singleAuthorization } from '../node-request.ts';

/**
 * Every /v1 route is authenticated; the principal is set on the context for the routes. Routes say
 * on their declaration (api-routes.ts) when they are public or also take a username and password.
 */
export function authenticate(
  auth: AuthService,
  authOf: (method: string, path: string) => RouteAuth | undefined,
): MiddlewareHandler<AppEnv> {
  const verify = async (c: Context<AppEnv>, next: Next, allowPassword: boolean) => {
    c.set('principal', await auth.authenticate(c.req.header('authorization'), { allowPassword }));
    await next();
  };
  return (c, next) => {
    const kind = authOf(c.req.method, c.req.path);
    if (kind === 'public') return next();
    // The hot path: a bearer verified before and not expired, answered without a promise of its own. The header is
    // read from Node's request when there is exactly one (node-request.ts); anything else goes through verify().
    const cached = auth.cachedPrincipal(singleAuthorization(c));
    if (cached) {
      c.set('principal', cached);
      return next();
    }
    return verify(c, next, kind === 'password');
  };
}
