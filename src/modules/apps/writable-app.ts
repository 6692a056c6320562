import { type MiddlewareHandler } from 'hono';
import { type AppEnv } from '../../http/env.ts';
import { type AppsService } from './apps.service.ts';

/**
 * Route middleware for actions a limited collaborator may not do (scale, deploy, run): the 403
 * comes after the app's 404 and before the body is read, as when the handlers checked it first.
 * `c.var.app` becomes the app as the writable check read it.
 */
export function requireWritableApp(apps: Pick<AppsService, 'writableApp'>, what: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('app', apps.writableApp(c.get('principal').user, c.req.param('app') ?? '', what));
    await next();
  };
}
