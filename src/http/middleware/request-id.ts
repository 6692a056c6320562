import { randomUUID } from 'node:crypto';
import { type ServerResponse } from 'node:http';
import { type Context, type MiddlewareHandler } from 'hono';
import { type ContentfulStatusCode, type StatusCode } from 'hono/utils/http-status';
import { type Logger } from '../../shared/logger.ts';
import { type AppEnv } from '../env.ts';
import { sentRequestId } from '../node-request.ts';

const VALID_ID = /^[\w.-]{1,128}$/;

/** Marks the answers made by `answerWithRequestId`: their own headers carry the id already. */
const CARRIES_ID = Symbol('carries X-Request-ID');
type MarkedResponse = Response & { [CARRIES_ID]?: true };

/**
 * Gives every request an id (kept from X-Request-ID when the client sends one), and every answer the X-Request-ID
 * header: added once the chain has answered (errors included), unless the answer carries it already. The lines
 * logged about a request carry its id through `requestLogger`.
 */
export function requestId(): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    const incoming = sentRequestId(c);
    const id = incoming && VALID_ID.test(incoming) ? incoming : randomUUID();
    c.set('requestId', id);
    // The chain (sync-chain.ts) answers synchronously when every step does: no promise of this step's own then.
    const done: unknown = next();
    if (done instanceof Promise) return done.then(() => stampId(c));
    stampId(c);
    return done as Promise<void>;
  };
}

/**
 * The logger for lines about this request: a child of `logger` carrying the request's id, made when a line is to
 * be written (most requests log nothing: no child, nor a function to make one, is made for them).
 */
export function requestLogger(c: Context<AppEnv>, logger: Logger): Logger {
  const id = c.get('requestId');
  return id === undefined ? logger : logger.child({ reqId: id });
}

function stampId(c: Context<AppEnv>): void {
  if (!(c.res as MarkedResponse)[CARRIES_ID]) setHeaderEarly(c, 'X-Request-ID', c.get('requestId'));
}

/**
 * An answer whose headers are a plain record carrying the request id: @hono/node-server writes such an
 * answer with one `writeHead` of that record. A header put on Node's response beforehand (`setHeaderEarly`) makes
 * Node merge the two sets header by header instead, and hono's `c.body()` turns a record of more than one header
 * into a web `Headers` object that the server converts back. For the hottest answers (GET /v1/apps/:app, an app's
 * creation, and with a null body and no type, its deletion's 204).
 */
export function answerWithRequestId(
  c: Context<AppEnv>,
  body: string,
  status: ContentfulStatusCode,
  contentType: string,
): Response;
export function answerWithRequestId(c: Context<AppEnv>, body: null, status: StatusCode): Response;
export function answerWithRequestId(
  c: Context<AppEnv>,
  body: string | null,
  status: StatusCode,
  contentType?: string,
): Response {
  const id = c.get('requestId');
  const headers: Record<string, string> = contentType === undefined ? {} : { 'Content-Type': contentType };
  if (id === undefined)
    return body === null ? c.body(null, status, headers) : c.body(body, status as ContentfulStatusCode, headers);
  headers['X-Request-ID'] = id;
  const res: MarkedResponse = new Response(body, { status, headers });
  // A property, not a WeakSet: adding to a WeakSet cost about as much as the header it saves.
  res[CARRIES_ID] = true;
  return res;
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
