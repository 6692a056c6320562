// Signed, expiring URLs of the logs service and of archive downloads. The official Go client keeps
// only `token` and `timestamp` from a logs_url (docs/research/clients-runtime.md §2.2), so the
// whole authorisation lives in those two parameters: token = <subject>.<HMAC(purpose|subject|timestamp)>.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { type Clock } from '../../shared/clock.ts';

export type UrlCheck = { ok: true; subject: string } | { ok: false; reason: 'invalid' | 'expired' };

export function createUrlSigner(deps: { key: Buffer; clock: Clock }) {
  const mac = (purpose: string, subject: string, timestamp: string) =>
    createHmac('sha256', deps.key).update(`${purpose}|${subject}|${timestamp}`).digest('base64url');

  return {
    /** Query string `token=…&timestamp=…` authorising `purpose` on `subject` from now. */
    query(purpose: string, subject: string): string {
      const timestamp = String(Math.floor(deps.clock.now() / 1000));
      return `token=${encodeURIComponent(`${subject}.${mac(purpose, subject, timestamp)}`)}&timestamp=${timestamp}`;
    },

    /** Checks a token/timestamp pair; `ttlMs` counts from the timestamp it was issued at. */
    check(purpose: string, token: string | undefined, timestamp: string | undefined, ttlMs: number): UrlCheck {
      if (!token || !timestamp || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'invalid' };
      const dot = token.lastIndexOf('.');
      if (dot <= 0) return { ok: false, reason: 'invalid' };
      const subject = token.slice(0, dot);
      const given = Buffer.from(token.slice(dot + 1));
      const expected = Buffer.from(mac(purpose, subject, timestamp));
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return { ok: false, reason: 'invalid' };
      const issued = Number(timestamp) * 1000;
      // A little slack for a timestamp from "the future" (the second is truncated when signing).
      if (issued > deps.clock.now() + 60_000 || deps.clock.now() - issued > ttlMs)
        return { ok: false, reason: 'expired' };
      return { ok: true, subject };
    },
  };
}

export type UrlSigner = ReturnType<typeof createUrlSigner>;
