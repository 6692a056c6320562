import { type Context } from 'hono';
import { type ContentfulStatusCode } from 'hono/utils/http-status';

export type FieldErrors = Record<string, string[]>;

/**
 * The one error type of the emulator. Services throw it; `renderError` (wired as app.onError)
 * is the only place that writes an error body, in the platform's shapes:
 * 400 {error}, 401 {error}, 402 {error,url}, 404 {resource,error}, 422 {errors:{field:[msg]}},
 * 429 plain text, 50x {error}.
 */
export class ApiError extends Error {
  constructor(
    public readonly status: ContentfulStatusCode,
    public readonly body: Record<string, unknown> | string,
    public readonly headers: Record<string, string> = {},
  ) {
    super(typeof body === 'string' ? body : String(body.error ?? JSON.stringify(body)));
  }

  static badRequest(error: string): ApiError {
    return new ApiError(400, { error });
  }
  static unauthorized(
    error = 'You are not authorized to do this operation, please authenticate with a valid token',
  ): ApiError {
    return new ApiError(401, { error }, { 'WWW-Authenticate': 'Bearer realm="scalingo-emulator"' });
  }
  static paymentRequired(error: string, url: string): ApiError {
    return new ApiError(402, { error, url });
  }
  static forbidden(error: string): ApiError {
    return new ApiError(403, { error });
  }
  static notFound(resource: string, error = 'not found'): ApiError {
    return new ApiError(404, { resource, error });
  }
  static unsupportedMediaType(error: string): ApiError {
    return new ApiError(415, { error });
  }
  /**
   * The body was not read to its end: the connection is closed after the answer (the rest of the
   * body would otherwise be read as the next request, or the socket dropped under a keep-alive promise).
   */
  static payloadTooLarge(limit: number): ApiError {
    return new ApiError(
      413,
      { error: `request body is larger than the limit of ${limit} bytes` },
      { Connection: 'close' },
    );
  }
  static unprocessable(errors: FieldErrors): ApiError {
    return new ApiError(422, { errors });
  }
  /** One field, one message: the most common 422. */
  static invalid(field: string, message: string): ApiError {
    return new ApiError(422, { errors: { [field]: [message] } });
  }
  static tooManyRequests(retryAfterSeconds: number): ApiError {
    return new ApiError(429, 'Too many requests: the rate limit is exceeded, please retry later.\n', {
      'Retry-After': String(retryAfterSeconds),
    });
  }
  /** `retryAfterSeconds`: when the same request can be sent again (Retry-After), when the wait has a known scale. */
  static unavailable(error: string, retryAfterSeconds?: number): ApiError {
    return new ApiError(503, { error }, retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : {});
  }
  /** The disk holding the data directory is full: the same request can succeed once space returns. */
  static insufficientStorage(error = DISK_FULL_MESSAGE): ApiError {
    return new ApiError(507, { error });
  }
  static internal(error = 'internal server error'): ApiError {
    return new ApiError(500, { error });
  }
}

export const DISK_FULL_MESSAGE =
  "The disk holding the emulator's data directory is full (no space left on device): free some space, then retry";

export function errorResponse(c: Context, err: ApiError): Response {
  for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
  if (typeof err.body === 'string') return c.text(err.body, err.status);
  return c.json(err.body, err.status);
}
