// The attach URL of a one-off container: `<api>/attach/<token>`. The token carries the whole
// authorisation (the URL "needs no other credential"): the platform container id, an expiry, and an
// HMAC of both. The token is a path segment, not a query parameter, because the official CLI builds
// `<attach_url>/files` and `<attach_url>/wait` by string concatenation (docs/research/clients-runtime.md §1.3, §1.6).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Clock } from '../../shared/clock.ts';

export const ATTACH_PREFIX = '/attach/';

export type AttachCheck = { ok: true; containerId: string; expired: boolean } | { ok: false };

/**
 * Signs and checks attach tokens `<container id>.<expiry, s>.<HMAC-SHA256>`. The key is random per
 * emulator process: terminals do not survive a restart either (attached one-offs are stopped then).
 */
export function createAttachSigner(deps: { clock: Clock; ttlMs: number; key?: Buffer }) {
  const key = deps.key ?? randomBytes(32);
  const mac = (containerId: string, exp: string) =>
    createHmac('sha256', key).update(`attach|${containerId}|${exp}`).digest('base64url');

  function token(containerId: string): string {
    const exp = String(Math.ceil((deps.clock.now() + deps.ttlMs) / 1000));
    return `${containerId}.${exp}.${mac(containerId, exp)}`;
  }

  return {
    token,

    /** A well-signed token past its expiry is `expired` (some calls still accept it, see one-off.service.ts). */
    check(token: string | undefined): AttachCheck {
      const m = /^([0-9a-f]{24})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token ?? '');
      if (!m) return { ok: false };
      const given = Buffer.from(m[3]);
      const expected = Buffer.from(mac(m[1], m[2]));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false };
      return { ok: true, containerId: m[1], expired: deps.clock.now() > Number(m[2]) * 1000 };
    },

    url(apiUrl: string, containerId: string): string {
      return `${apiUrl}${ATTACH_PREFIX}${token(containerId)}`;
    },
  };
}

export type AttachSigner = ReturnType<typeof createAttachSigner>;
