import { z } from 'zod';

// Bodies of the control plane (/_emulator/*). Every field is bounded: a fault is data, never code
// (path patterns are globs compiled to a linear-time matcher, see fault-pattern.ts).

export const resetSchema = z
  .object({
    /** Username or e-mail: only this user's apps go. Absent: everything. */
    user: z.string().min(1).max(200).optional(),
  })
  .strict();

export const advanceSchema = z
  .object({
    ms: z.number().int('must be a whole number of milliseconds').positive('must be more than 0').max(366 * 24 * 3600_000, 'must be at most a year'),
  })
  .strict();

const probability = z.number().min(0).max(1);
const count = z.number().int().min(1).max(1_000_000);
const containerName = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}-\d{1,4}$/, 'must name a container like web-1');

export const apiFaultSchema = z
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
    probability: probability.optional(),
    /** Makes the probability draws reproducible (a seeded generator per fault). */
    seed: z.number().int().min(0).max(2 ** 32 - 1).optional(),
    /** Applies this many times, then the fault is removed. */
    count: count.optional(),
  })
  .strict()
  .superRefine((f, ctx) => {
    if (f.latency_ms === undefined && f.status === undefined && !f.drop) ctx.addIssue({ code: 'custom', path: ['latency_ms'], message: 'an api fault needs latency_ms, status or drop' });
    if (f.status !== undefined && f.drop) ctx.addIssue({ code: 'custom', path: ['drop'], message: 'cannot be combined with status' });
  });

export const crashFaultSchema = z.object({ type: z.literal('crash'), app: z.string().min(1).max(100), container: containerName }).strict();
export const oomFaultSchema = z.object({ type: z.literal('oom'), app: z.string().min(1).max(100), container: containerName }).strict();

export const dockerUnavailableSchema = z
  .object({
    type: z.literal('docker_unavailable'),
    /** How long the engine looks down (on the emulator's clock). */
    seconds: z.number().positive().max(24 * 3600),
  })
  .strict();

export const logDelaySchema = z
  .object({
    type: z.literal('log_delay'),
    log_delay_ms: z.number().int().min(1).max(600_000),
    /** Only this app's containers (default: every app). */
    app: z.string().min(1).max(100).optional(),
  })
  .strict();

export const faultSchema = z.discriminatedUnion('type', [apiFaultSchema, crashFaultSchema, oomFaultSchema, dockerUnavailableSchema, logDelaySchema]);

/** `type` may be left out when the fields say it: a path is an API fault, log_delay_ms a log delay. */
export function withImpliedType(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const f = value as Record<string, unknown>;
  if (f.type !== undefined) return value;
  if (f.path !== undefined) return { ...f, type: 'api' };
  if (f.log_delay_ms !== undefined) return { ...f, type: 'log_delay' };
  return value;
}

export type FaultInput = z.input<typeof faultSchema>;
export type FaultSpec = z.infer<typeof faultSchema>;
export type ApiFaultSpec = z.infer<typeof apiFaultSchema>;
