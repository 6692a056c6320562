import { z } from 'zod';
import { isoDateTime, lazySchema } from '../../http/api-schemas.ts';

// Bodies of the control plane (/_emulator/*). Every field is bounded: a fault is data, never code
// (path patterns are globs compiled to a linear-time matcher, see fault-pattern.ts).

export const resetSchema = lazySchema(() =>
  z
    .object({
      /** Username or e-mail: only this user's apps go. Absent: everything. */
      user: z.string().min(1).max(200).optional(),
    })
    .strict(),
);

// Far beyond any test's need, and still a date JavaScript can represent.
const MAX_ADVANCE_MS = 100 * 366 * 24 * 3600_000;

export const advanceSchema = lazySchema(() =>
  z
    .object({
      ms: z
        .number()
        .int('must be a whole number of milliseconds')
        .positive('must be more than 0')
        .max(MAX_ADVANCE_MS, 'must be at most 100 years'),
    })
    .strict(),
);

const probability = lazySchema(() => z.number().min(0).max(1));
const count = lazySchema(() => z.number().int().min(1).max(1_000_000));
const containerName = lazySchema(() =>
  z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}-\d{1,4}$/, 'must name a container like web-1'),
);

export const apiFaultSchema = lazySchema(() =>
  z
    .object({
      type: z.literal('api'),
      /** HTTP method, or * for any. */
      method: z
        .string()
        .regex(/^([A-Za-z]{1,10}|\*)$/, 'must be an HTTP method or *')
        .default('*')
        .transform((m) => m.toUpperCase()),
      /** Glob on the path: * is one path segment (or part of one), ** any number of segments. */
      path: z.string().min(1).max(300).startsWith('/', 'must start with /'),
      latency_ms: z.number().int().min(0).max(120_000).optional(),
      status: z.union([z.literal(500), z.literal(503), z.literal(429)]).optional(),
      drop: z.boolean().optional(),
      probability: probability().optional(),
      /** Makes the probability draws reproducible (a seeded generator per fault). */
      seed: z
        .number()
        .int()
        .min(0)
        .max(2 ** 32 - 1)
        .optional(),
      /** Applies this many times, then the fault is removed. */
      count: count().optional(),
    })
    .strict()
    .superRefine((f, ctx) => {
      if (f.latency_ms === undefined && f.status === undefined && !f.drop)
        ctx.addIssue({
          code: 'custom',
          path: ['latency_ms'],
          message: 'an api fault needs latency_ms, status or drop',
        });
      if (f.status !== undefined && f.drop)
        ctx.addIssue({ code: 'custom', path: ['drop'], message: 'cannot be combined with status' });
    }),
);

export const crashFaultSchema = lazySchema(() =>
  z.object({ type: z.literal('crash'), app: z.string().min(1).max(100), container: containerName() }).strict(),
);
export const oomFaultSchema = lazySchema(() =>
  z.object({ type: z.literal('oom'), app: z.string().min(1).max(100), container: containerName() }).strict(),
);

export const dockerUnavailableSchema = lazySchema(() =>
  z
    .object({
      type: z.literal('docker_unavailable'),
      /** How long the engine looks down (on the emulator's clock). */
      seconds: z
        .number()
        .positive()
        .max(24 * 3600),
    })
    .strict(),
);

export const logDelaySchema = lazySchema(() =>
  z
    .object({
      type: z.literal('log_delay'),
      log_delay_ms: z.number().int().min(1).max(600_000),
      /** Only this app's containers (default: every app). */
      app: z.string().min(1).max(100).optional(),
    })
    .strict(),
);

export const faultSchema = lazySchema(() =>
  z.discriminatedUnion('type', [
    apiFaultSchema(),
    crashFaultSchema(),
    oomFaultSchema(),
    dockerUnavailableSchema(),
    logDelaySchema(),
  ]),
);

/** `type` may be left out when the fields say it: a path is an API fault, log_delay_ms a log delay. */
export function withImpliedType(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const f = value as Record<string, unknown>;
  if (f.type !== undefined) return value;
  if (f.path !== undefined) return { ...f, type: 'api' };
  if (f.log_delay_ms !== undefined) return { ...f, type: 'log_delay' };
  return value;
}

export type FaultInput = z.input<ReturnType<typeof faultSchema>>;
export type FaultSpec = z.infer<ReturnType<typeof faultSchema>>;
export type ApiFaultSpec = z.infer<ReturnType<typeof apiFaultSchema>>;

/** POST /_emulator/faults (documentation: the control object parses it, `type` implied by the fields). */
export const addFaultBody = lazySchema(() =>
  z.object({
    fault: z.union([
      apiFaultSchema(),
      crashFaultSchema(),
      oomFaultSchema(),
      dockerUnavailableSchema(),
      logDelaySchema(),
    ]),
  }),
);

// ---- Answers ----

/** `{id, created_at, size}` of a kept snapshot (snapshots.ts `snapshotJson`). */
export const snapshotResource = lazySchema(() =>
  z.object({ id: z.string(), created_at: isoDateTime, size: z.number().int() }).meta({ id: 'EmulatorSnapshot' }),
);
export const snapshotEnvelope = lazySchema(() => z.object({ snapshot: snapshotResource() }));
export const snapshotList = lazySchema(() => z.object({ snapshots: z.array(snapshotResource()) }));

// faults.ts `json`: the fault as parsed, with its bookkeeping.
const faultState = {
  id: z.string(),
  created_at: isoDateTime,
  applied: z.number().int(),
  remaining: z.number().int().nullable(),
  expires_at: isoDateTime.nullable(),
};
export const faultResource = lazySchema(() =>
  z
    .discriminatedUnion('type', [
      z.object({
        type: z.literal('api'),
        method: z.string(),
        path: z.string(),
        latency_ms: z.number().int().optional(),
        status: z.number().int().optional(),
        drop: z.boolean().optional(),
        probability: z.number().optional(),
        seed: z.number().int().optional(),
        count: z.number().int().optional(),
        ...faultState,
      }),
      z.object({ type: z.literal('crash'), app: z.string(), container: z.string(), ...faultState }),
      z.object({ type: z.literal('oom'), app: z.string(), container: z.string(), ...faultState }),
      z.object({ type: z.literal('docker_unavailable'), seconds: z.number(), ...faultState }),
      z.object({
        type: z.literal('log_delay'),
        log_delay_ms: z.number().int(),
        app: z.string().optional(),
        ...faultState,
      }),
    ])
    .meta({ id: 'EmulatorFault' }),
);
export const faultEnvelope = lazySchema(() => z.object({ fault: faultResource() }));
export const faultList = lazySchema(() => z.object({ faults: z.array(faultResource()) }));

export const clockAnswer = lazySchema(() =>
  z.object({ clock: z.object({ mode: z.enum(['manual', 'system']), now: isoDateTime }) }),
);
