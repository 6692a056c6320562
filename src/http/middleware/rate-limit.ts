import { type MiddlewareHandler } from 'hono';
import { type Clock } from '../../shared/clock.ts';
import { type AppEnv } from '../env.ts';
import { ApiError } from '../errors.ts';
import { setHeaderEarly } from './request-id.ts';

/**
 * Per-token fixed one-minute windows (the platform: 60 requests per minute, then 429 in plain
 * text). Runs after auth so the key is the token (or the user, for password auth).
 */
export function rateLimit(opts: { perMinute: number; clock: Clock }): MiddlewareHandler<AppEnv> {
  const windows = new Map<string, { start: number; count: number }>();
  return async (c, next) => {
    const p = c.get('principal');
    if (p) {
      const key = p.tokenId ?? `user:${p.user.id}`;
      const now = opts.clock.now();
      let w = windows.get(key);
      if (!w || now - w.start >= 60_000) {
        w = { start: now, count: 0 };
        windows.set(key, w);
        if (windows.size > 10_000) for (const [k, v] of windows) if (now - v.start >= 60_000) windows.delete(k);
      }
      w.count++;
      setHeaderEarly(c, 'X-RateLimit-Limit', String(opts.perMinute));
      setHeaderEarly(c, 'X-RateLimit-Remaining', String(Math.max(0, opts.perMinute - w.count)));
      if (w.count > opts.perMinute)
        throw ApiError.tooManyRequests(Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000)));
    }
    await next();
  };
}
