import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../errors.ts';
import type { AppEnv } from '../env.ts';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The API sends and receives JSON only: a request body of another declared type (XML, forms…)
 * is refused with 415 and a JSON error. A body without Content-Type, or with curl's default
 * application/x-www-form-urlencoded (`curl -d '{...}'`), is read as JSON.
 */
export function jsonOnly(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (WITH_BODY.has(c.req.method)) {
      const type = c.req.header('content-type');
      const hasBody = bodyAnnounced(c.req.header('content-length'), c.req.header('transfer-encoding'));
      if (hasBody && type && !/^application\/(([\w.+-]+\+)?json|x-www-form-urlencoded)\b/i.test(type.trim())) {
        throw ApiError.unsupportedMediaType(`the API accepts JSON only (Content-Type: application/json), not "${type.split(';')[0]}"`);
      }
    }
    await next();
  };
}

export function limitBody(maxSize: number): MiddlewareHandler<AppEnv> {
  const limit = bodyLimit({
    maxSize,
    onError: () => {
      throw ApiError.payloadTooLarge(maxSize);
    },
  });
  // Only where a body can come: bodyLimit reads c.req.raw, which makes @hono/node-server build a
  // full Request (and an AbortSignal) — measurable on every GET otherwise.
  return (c, next) => (WITH_BODY.has(c.req.method) && bodyAnnounced(c.req.header('content-length'), c.req.header('transfer-encoding')) ? limit(c, next) : next());
}

/** From the headers alone (reading c.req.raw would build a full Request on every call). */
function bodyAnnounced(length: string | undefined, encoding: string | undefined): boolean {
  return (length !== undefined && length !== '0') || encoding !== undefined;
}
