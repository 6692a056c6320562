import { type MiddlewareHandler } from 'hono';
import { type Logger } from '../../shared/logger.ts';
import { type AppEnv } from '../env.ts';
import { requestLogger } from './request-id.ts';

/**
 * One line per request, at debug level: method, path (no query: it may carry signed tokens), status, duration.
 * The HTTP app installs it only when the emulator's logger writes debug lines (app.ts): the level is set by the
 * configuration at start and never changed while running, so below debug no request pays for a step that does nothing.
 */
export function accessLog(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const start = performance.now();
    await next();
    // Attach URLs carry their credential in the path: it never reaches the log.
    requestLogger(c, logger).debug(
      {
        method: c.req.method,
        path: c.req.path.replace(/^\/attach\/[^/]+/, '/attach/<token>'),
        status: c.res.status,
        ms: Math.round((performance.now() - start) * 10) / 10,
      },
      'request',
    );
  };
}
