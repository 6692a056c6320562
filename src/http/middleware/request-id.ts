import type { Context, MiddlewareHandler } from 'hono';
import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AppEnv } from '../env.ts';
import type { Logger } from '../../shared/logger.ts';

const VALID_ID = /^[\w.-]{1,128}$/;

/** Gives every request an id (kept from X-Request-ID when the client sends one) and a child logger. */
export function requestId(logger: Logger): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    const incoming = c.req.header('x-request-id');
    const id = incoming && VALID_ID.test(incoming) ? incoming : randomUUID();
    c.set('requestId', id);
    let child: Logger | undefined;
    c.set('log', () => (child ??= logger.child({ reqId: id })));
    setHeaderEarly(c, 'X-Request-ID', id);
    return next();
  };
}

/**
 * A header every answer carries. Served by @hono/node-server, it goes straight on Node's response
 * (merged into the status line's headers when the answer is written): `c.header()` before the
 * answer exists would make hono build a web `Headers` object for every request, and the server
 * convert it back, where an answer without prepared headers is written from a plain object.
 * Elsewhere (app.request() in tests, other runtimes) it is hono's own header.
 */
export function setHeaderEarly(c: Context, name: string, value: string): void {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  if (outgoing && typeof outgoing.setHeader === 'function' && !outgoing.headersSent) outgoing.setHeader(name, value);
  else c.header(name, value);
}
