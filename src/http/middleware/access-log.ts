import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.ts';
import type { Logger } from '../../shared/logger.ts';

/**
 * One line per request, at debug level: method, path (no query: it may carry signed tokens), status, duration.
 * The level is checked on the emulator's logger first: below debug, no request pays for a child logger.
 */
export function accessLog(logger?: Logger): MiddlewareHandler<AppEnv> {
  const timed: MiddlewareHandler<AppEnv> = async (c, next) => {
    const start = performance.now();
    await next();
    const log = c.get('log')();
    if (log.isLevelEnabled('debug')) {
      // Attach URLs carry their credential in the path: it never reaches the log.
      log.debug(
        {
          method: c.req.method,
          path: c.req.path.replace(/^\/attach\/[^/]+/, '/attach/<token>'),
          status: c.res.status,
          ms: Math.round((performance.now() - start) * 10) / 10,
        },
        'request',
      );
    }
  };
  // Below debug level the request passes through synchronously (no promise of this middleware's own).
  return (c, next) => (logger && !logger.isLevelEnabled('debug') ? next() : timed(c, next));
}
