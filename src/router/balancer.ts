// Which web container serves a request: strict round-robin per app, or — with sticky sessions — the
// container the client's `sc-sticky-session` cookie pins, while that container still exists.
// Platform: https://doc.scalingo.com/platform/app/sticky-sessions and /platform/internals/routing.
import { createHmac, randomBytes } from 'node:crypto';
import { type RouteTarget, type Upstream } from './types.ts';

export const STICKY_COOKIE = 'sc-sticky-session';
/** The platform's cookie lasts 24 hours and is renewed at every response. */
export const STICKY_MAX_AGE_S = 86_400;

export interface Balancer {
  /** Upstreams in the order to try them: the chosen one first, then the others as fallbacks. */
  order(target: RouteTarget, cookieHeader: string | undefined): Upstream[];
  /** Set-Cookie value pinning the client to `upstream`. */
  stickyCookie(target: RouteTarget, upstream: Upstream, nowMs: number): string;
}

export function createBalancer(secret: Buffer = randomBytes(32)): Balancer {
  // appId → position of the next round-robin pick.
  const next = new Map<string, number>();

  // Opaque and unforgeable, like the platform's. The host port is part of it: a restarted, redeployed
  // or rescaled container gets a new port, so its old cookies stop matching — the platform also
  // invalidates cookies on deployment, restart and scaling.
  const token = (appId: string, u: Upstream) =>
    createHmac('sha256', secret).update(`${appId}\0${u.containerName}\0${u.port}`).digest('base64url').slice(0, 32);

  return {
    order(target, cookieHeader) {
      const ups = target.upstreams;
      if (ups.length === 0) return [];
      if (target.stickySession) {
        const pinned = readCookie(cookieHeader, STICKY_COOKIE);
        const i = pinned ? ups.findIndex((u) => token(target.appId, u) === pinned) : -1;
        // A pinned client does not move the round-robin: it is per end-user, not per request.
        if (i >= 0) return rotate(ups, i);
      }
      const start = (next.get(target.appId) ?? 0) % ups.length;
      next.set(target.appId, (start + 1) % ups.length);
      return rotate(ups, start);
    },

    stickyCookie(target, upstream, nowMs) {
      const expires = new Date(nowMs + STICKY_MAX_AGE_S * 1000).toUTCString();
      // No Domain attribute: a host-only cookie on <app>.localhost is what Domain=<app host> means there.
      return `${STICKY_COOKIE}=${token(target.appId, upstream)}; Expires=${expires}; Max-Age=${STICKY_MAX_AGE_S}; Path=/; HttpOnly`;
    },
  };
}

function rotate<T>(list: T[], start: number): T[] {
  return [...list.slice(start), ...list.slice(0, start)];
}

export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
