import { type Context, type MiddlewareHandler, type Next } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { type AppEnv } from '../env.ts';
import { ApiError } from '../errors.ts';
import { requestHeader } from '../node-request.ts';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The API sends and receives JSON only: a request body of another declared type (XML, forms…)
 * is refused with 415 and a JSON error. A body without Content-Type, or with curl's default
 * application/x-www-form-urlencoded (`curl -d '{...}'`), is read as JSON.
 *
 * Then the body size limit (limitBody), in the same middleware: a request without a body (GET, HEAD)
 * goes through one step.
 */
export function bodyGuards(maxSize: number): MiddlewareHandler<AppEnv> {
  const limit = limitBody(maxSize);
  return (c, next) => {
    if (!WITH_BODY.has(c.req.method)) return next();
    const sent = sentBody(c);
    refuseNonJson(requestHeader(c, 'content-type'), sent);
    return limit(c, next, sent);
  };
}

/** The body's headers, read once a request (node-request.ts: the values hono's reading gives). */
interface SentBody {
  length: string | undefined;
  encoding: string | undefined;
}

function sentBody(c: Context<AppEnv>): SentBody {
  return { length: requestHeader(c, 'content-length'), encoding: requestHeader(c, 'transfer-encoding') };
}

function refuseNonJson(type: string | undefined, sent: SentBody): void {
  if (bodyAnnounced(sent) && type && !/^application\/(([\w.+-]+\+)?json|x-www-form-urlencoded)\b/i.test(type.trim())) {
    throw ApiError.unsupportedMediaType(
      `the API accepts JSON only (Content-Type: application/json), not "${type.split(';')[0]}"`,
    );
  }
}

/** A route's body limit as a middleware; bodyGuards hands over the headers it has read already. */
type LimitStep = (c: Context<AppEnv>, next: Next, sent?: SentBody) => ReturnType<MiddlewareHandler<AppEnv>>;

export function limitBody(maxSize: number): LimitStep {
  const limit = bodyLimit({
    maxSize,
    onError: () => {
      throw ApiError.payloadTooLarge(maxSize);
    },
  });
  return (c, next, sent = sentBody(c)) => {
    if (!WITH_BODY.has(c.req.method)) return next();
    // With a Content-Length the header alone decides (Node's parser holds the client to it). The
    // body is left untouched: a route that answers without reading it leaves Node to discard it,
    // and the connection stays usable. Going through bodyLimit would wrap c.req.raw — a full Request
    // whose stream is cancelled, with the socket, when the answer goes out unread.
    const { length, encoding } = sent;
    if (length !== undefined && encoding === undefined) {
      if (!/^\d+$/.test(length) || Number(length) > maxSize) throw ApiError.payloadTooLarge(maxSize);
      return next();
    }
    return bodyAnnounced(sent) ? limit(c, next) : next();
  };
}

/** From the headers alone (reading c.req.raw would build a full Request on every call). */
function bodyAnnounced({ length, encoding }: SentBody): boolean {
  return (length !== undefined && length !== '0') || encoding !== undefined;
}
