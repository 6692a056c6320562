import { z } from 'zod';
import { lazySchema } from '../../http/api-schemas.ts';
import { appResource } from '../apps/apps.schemas.ts';
import { containerResource } from '../containers/containers.schemas.ts';

// POST /v1/apps/:app/run. The Go client always sends every key (`has_uploads` false, `size` "M");
// the npm client only `command` and what the caller set (docs/research/clients-runtime.md §1.1).
export const runSchema = lazySchema(() =>
  z.object({
    command: z.string().trim().min(1, "can't be blank"),
    // Values are strings on the platform; numbers and booleans from hand-written JSON are taken as text.
    env: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String))
      .nullish()
      .refine(
        (env) => !env || Object.keys(env).every((k) => k !== '' && !k.includes('=') && !k.includes('\0')),
        'variable names must be non-empty and contain no "="',
      ),
    size: z.string().nullish(),
    detached: z.boolean().nullish(),
    has_uploads: z.boolean().nullish(),
  }),
);

export type RunInput = z.infer<ReturnType<typeof runSchema>>;

// POST …/containers/:id/kill. Only the two signals the platform forwards.
export const KILL_SIGNALS = ['SIGUSR1', 'SIGUSR2'] as const;
export const killSchema = lazySchema(() =>
  z.object({
    signal: z
      .string()
      .refine((s) => (KILL_SIGNALS as readonly string[]).includes(s), `must be ${KILL_SIGNALS.join(' or ')}`),
  }),
);

// PUT <attach_url>. The Go CLI sends the sizes as strings (`strconv.Itoa`), the DOC shows integers.
// A terminal without a size makes the CLI send "0" × "0": accepted, and the TTY keeps its size
// (the CLI only logs a refusal; docs/fidelity.md).
const dimension = lazySchema(() =>
  z
    .union([z.number(), z.string().trim().regex(/^\d+$/, 'must be a whole number').transform(Number)])
    .pipe(z.number().int('must be a whole number').min(0, 'must be at least 0').max(10_000, 'must be at most 10000')),
);

export const resizeSchema = lazySchema(() => z.object({ width: dimension(), height: dimension() }));

/** A very old CLI had a malformed struct tag and sent `Width`/`Height`: those keys are read too. */
export function normaliseResize(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const b = body as Record<string, unknown>;
  return { width: b.width ?? b.Width, height: b.height ?? b.Height };
}

/** PUT <attach_url> as documented: integers (strings and `Width`/`Height` are read too). */
export const resizeBodyDoc = lazySchema(() =>
  z.object({
    width: z.union([z.number().int(), z.string()]),
    height: z.union([z.number().int(), z.string()]),
  }),
);

/** POST …/containers/:id/kill as documented (the service checks it). */
export const killBodyDoc = lazySchema(() => z.object({ signal: z.enum(KILL_SIGNALS) }));

// ---- Answers ----

/** #14: the one-off container (ps shape plus its memory and app), its attach URL, and the operation when attached. */
export const runAnswer = lazySchema(() =>
  z
    .object({
      container: containerResource().extend({ memory: z.number().int(), app: appResource }),
      attach_url: z.string(),
      operation_url: z.string().optional(),
      operation: z.string().optional(),
    })
    .meta({ id: 'OneOffRun' }),
);

/** GET <attach_url>/wait: integers only (the CLI decodes into map[string]int). */
export const waitAnswer = lazySchema(() => z.object({ exit_code: z.number().int() }));
