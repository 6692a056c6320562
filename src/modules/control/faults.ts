// Fault injection: the registry of active faults, the API-fault middleware and the matching of
// path patterns. Faults are data: a pattern is a glob compiled to RE2 (linear time, no
// backtracking), never a user regex. Workload faults that act once (crash, oom) are carried out
// by the control service and are not kept; docker_unavailable and log_delay stay until removed
// (docker_unavailable ends by itself after its seconds, on the emulator's clock).

import { type IncomingMessage } from 'node:http';
import { type Context, type MiddlewareHandler, type Next } from 'hono';
import { RE2JS } from 're2js';
import { type AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock, type ClockTimer, isoDate } from '../../shared/clock.ts';
import { prefixedUuid } from '../../shared/ids.ts';
import { type ApiFaultSpec, type FaultSpec } from './control.schemas.ts';

/** At most this many faults at once (each request is checked against every API fault). */
export const MAX_FAULTS = 100;

export type StoredFault = Exclude<FaultSpec, { type: 'crash' | 'oom' }>;

export interface FaultRecord {
  id: string;
  spec: FaultSpec;
  createdAt: number;
  applied: number;
  remaining: number | null;
  expiresAt: number | null;
  matcher?: { method: string; path: RE2JS };
  random?: () => number;
  timer?: ClockTimer;
}

/** What an API fault does to a request that matches. */
export interface ApiFaultHit {
  latencyMs: number;
  status: 500 | 503 | 429 | null;
  drop: boolean;
}

/** `/v1/apps/ * /scale` → RE2: `*` one segment or part of one, `**` any number of segments. */
export function compilePathPattern(glob: string): RE2JS {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += RE2JS.quote(ch);
  }
  return RE2JS.compile(`^${re}$`);
}

/** mulberry32: a small seeded generator, so a fault's probability draws repeat from run to run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A fault as the API shows it: its fields, plus how often it applied and what is left of it. */
export type FaultJson = FaultSpec & {
  id: string;
  created_at: string | null;
  applied: number;
  remaining: number | null;
  expires_at: string | null;
};

export function createFaults(deps: { clock: Clock }) {
  const { clock } = deps;
  const faults = new Map<string, FaultRecord>();
  // Engine transitions a docker_unavailable fault makes, for the runtime's onEngine listeners.
  const engineListeners = new Set<(state: 'up' | 'down') => void>();
  let engineWasDown = false;
  function engineChanged(): void {
    const down = [...faults.values()].some((f) => f.spec.type === 'docker_unavailable');
    if (down === engineWasDown) return;
    engineWasDown = down;
    for (const l of [...engineListeners]) l(down ? 'down' : 'up');
  }

  function json(f: FaultRecord): FaultJson {
    return {
      id: f.id,
      ...f.spec,
      created_at: isoDate(f.createdAt),
      applied: f.applied,
      remaining: f.remaining,
      expires_at: isoDate(f.expiresAt),
    };
  }

  function remove(id: string): boolean {
    const f = faults.get(id);
    if (!f) return false;
    clock.clearTimeout(f.timer);
    faults.delete(id);
    if (f.spec.type === 'docker_unavailable') engineChanged();
    return true;
  }

  /** Counts one application of a fault; a fault with a count is removed when it is used up. */
  function use(f: FaultRecord): void {
    f.applied++;
    if (f.remaining !== null && --f.remaining <= 0) remove(f.id);
  }

  return {
    json,

    /** Records a fault that stays (api, docker_unavailable, log_delay). */
    add(spec: StoredFault): FaultRecord {
      if (faults.size >= MAX_FAULTS)
        throw ApiError.invalid('fault', `at most ${MAX_FAULTS} faults can be active at once`);
      const now = clock.now();
      const f: FaultRecord = {
        id: prefixedUuid('flt'),
        spec,
        createdAt: now,
        applied: 0,
        remaining: null,
        expiresAt: null,
      };
      if (spec.type === 'api') {
        f.matcher = { method: spec.method, path: compilePathPattern(spec.path) };
        f.remaining = spec.count ?? null;
        f.random = spec.seed !== undefined ? seeded(spec.seed) : Math.random;
      } else if (spec.type === 'docker_unavailable') {
        f.expiresAt = now + Math.round(spec.seconds * 1000);
        f.timer = clock.setTimeout(() => remove(f.id), f.expiresAt - now);
        f.timer.unref();
      }
      faults.set(f.id, f);
      if (spec.type === 'docker_unavailable') engineChanged();
      return f;
    },

    /** 'down' when a docker_unavailable fault begins, 'up' when the last one ends. */
    onEngineChange(listener: (state: 'up' | 'down') => void): () => void {
      engineListeners.add(listener);
      return () => void engineListeners.delete(listener);
    },

    /** A fault done at once (crash, oom): returned to the caller, never listed. */
    once(spec: FaultSpec): FaultRecord {
      return { id: prefixedUuid('flt'), spec, createdAt: clock.now(), applied: 1, remaining: 0, expiresAt: null };
    },

    /** Faults held (the middleware's fast path: nothing to match while none is). */
    size: () => faults.size,
    list: () => [...faults.values()],
    get: (id: string) => faults.get(id),
    remove,
    clear(): void {
      for (const id of [...faults.keys()]) remove(id);
    },

    /** The first API fault matching the request that fires (probability, count), or null. */
    matchApi(method: string, path: string): ApiFaultHit | null {
      if (!faults.size) return null;
      for (const f of faults.values()) {
        if (!f.matcher) continue;
        if (f.matcher.method !== '*' && f.matcher.method !== method) continue;
        if (!f.matcher.path.matches(path)) continue;
        const spec = f.spec as ApiFaultSpec;
        if (spec.probability !== undefined && (f.random ?? Math.random)() >= spec.probability) continue;
        use(f);
        return { latencyMs: spec.latency_ms ?? 0, status: spec.status ?? null, drop: spec.drop ?? false };
      }
      return null;
    },

    /** True while a docker_unavailable fault is active. */
    engineDown(): boolean {
      if (!faults.size) return false;
      for (const f of faults.values())
        if (f.spec.type === 'docker_unavailable' && f.expiresAt !== null && f.expiresAt > clock.now()) return true;
      return false;
    },

    hasLogDelay(): boolean {
      for (const f of faults.values()) if (f.spec.type === 'log_delay') return true;
      return false;
    },

    /** Delay to add to the delivery of a container's log lines (the largest matching fault). */
    logDelayMs(appId: string | undefined, appName: string | undefined): number {
      if (!faults.size) return 0;
      let ms = 0;
      for (const f of faults.values()) {
        if (f.spec.type !== 'log_delay') continue;
        if (f.spec.app && f.spec.app !== appName && f.spec.app !== appId) continue;
        ms = Math.max(ms, f.spec.log_delay_ms);
      }
      return ms;
    },
  };
}

export type Faults = ReturnType<typeof createFaults>;

// The platform's bodies for the injected statuses (docs/fidelity.md "Control plane").
const STATUS_ERRORS = {
  500: () => ApiError.internal('internal error (fault injected by the emulator)'),
  503: () => ApiError.unavailable('service unavailable (fault injected by the emulator)'),
  429: () => ApiError.tooManyRequests(1),
} as const;

/**
 * Applies API faults to every request but the control plane's own. Placed right after the request
 * id, so an injected 500 carries an id and the access log records the injected outcome.
 */
export function faultMiddleware(faults: Faults): MiddlewareHandler<AppEnv> {
  // Synchronous when no fault applies (every request but injected ones): no promise of its own.
  return (c, next) => {
    if (!faults.size() || c.req.path.startsWith('/_emulator')) return next();
    const hit = faults.matchApi(c.req.method, c.req.path);
    return hit ? applyFault(c, next, hit) : next();
  };
}

/** An API fault that matched: its latency, then a dropped connection, an injected status, or the route itself. */
async function applyFault(c: Context<AppEnv>, next: Next, hit: ApiFaultHit): Promise<Response | undefined> {
  // Latency is wall-clock time even with a manual clock: it is the network's delay, not the platform's.
  if (hit.latencyMs) await new Promise((r) => setTimeout(r, hit.latencyMs));
  if (hit.drop) {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    // The client sees its connection closed without an answer (ECONNRESET / "socket hang up").
    incoming?.socket.destroy();
    return new Response(null, { status: 502 });
  }
  if (hit.status) throw STATUS_ERRORS[hit.status]();
  await next();
  return undefined;
}
