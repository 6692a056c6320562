// The control plane's guard: `Authorization: Bearer <admin token>` from a loopback peer. The
// control plane can wipe and rewrite the whole state, so it answers neither other users' tokens
// nor another machine, even when the emulator listens on a wider address.

import { createHash, timingSafeEqual } from 'node:crypto';
import { type IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { type MiddlewareHandler } from 'hono';
import { type AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock } from '../../shared/clock.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** 127.0.0.0/8, ::1, and IPv4-mapped loopback (::ffff:127.x.y.z). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(a) === 4) return a.startsWith('127.');
  return a === '::1';
}

/** Compares in constant time (both sides hashed first, so lengths do not leak either). */
export function sameToken(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * Wrong admin tokens, counted in fixed one-minute windows for all callers together (the control
 * plane answers loopback peers only: there is no client to tell apart). Past `perMinute` (the API's
 * rate limit), a wrong token answers 429 as the API's limit does, until the window ends; the right
 * token always passes, so guessing cannot lock the owner out.
 */
export function adminFailureWindow(opts: { perMinute: number; clock: Clock }) {
  let start = Number.NEGATIVE_INFINITY;
  let count = 0;
  return {
    /** Seconds left in the window once its failures reached the limit, else 0. */
    blockedFor(): number {
      const now = opts.clock.now();
      if (now - start >= 60_000) {
        start = now;
        count = 0;
      }
      return count >= opts.perMinute ? Math.max(1, Math.ceil((start + 60_000 - now) / 1000)) : 0;
    },
    record(): void {
      count++;
    },
  };
}
export type AdminFailureWindow = ReturnType<typeof adminFailureWindow>;

/**
 * Middleware for /_emulator/* routes that change or reveal state. Requests made in-process through
 * app.request() have no peer socket: they come from the emulator's own process and pass the
 * peer check (the token is still required).
 */
export function requireAdmin(deps: { token: () => string; failures?: AdminFailureWindow }): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (incoming && !isLoopback(incoming.socket.remoteAddress))
      throw ApiError.forbidden('the control plane answers loopback clients only');
    const header = c.req.header('authorization') ?? '';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m)
      throw ApiError.unauthorized(
        'the control plane needs Authorization: Bearer <admin token> (printed at start, config adminToken)',
      );
    if (!sameToken(m[1], deps.token())) {
      const wait = deps.failures?.blockedFor() ?? 0;
      if (wait) throw ApiError.tooManyRequests(wait);
      deps.failures?.record();
      throw ApiError.unauthorized('invalid admin token');
    }
    await next();
  };
}
