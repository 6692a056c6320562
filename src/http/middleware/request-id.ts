import type { MiddlewareHandler } from 'hono';
import { randomUUID } from 'node:crypto';
import type { AppEnv } from '../env.ts';
import type { Logger } from '../../shared/logger.ts';

/** Gives every request an id (kept from X-Request-ID when the client sends one) and a child logger. */
export function requestId(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = c.req.header('x-request-id');
    const id = incoming && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    c.set('requestId', id);
    let child: Logger | undefined;
    c.set('log', () => (child ??= logger.child({ reqId: id })));
    c.header('X-Request-ID', id);
    await next();
  };
}
