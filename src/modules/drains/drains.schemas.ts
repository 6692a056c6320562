// The body of a new drain (spec "Log drain" table, research §3.2); what each type requires is
// checked by normaliseDrain (drain-types.ts).
import { z } from 'zod';

const optionalText = z
  .union([z.string(), z.number()])
  .optional()
  .nullable()
  .transform((v) => (v === undefined || v === null ? '' : String(v).trim()));

/** The Go client sends every key, empty ones as "" (and port as a string). */
export const drainBodySchema = z.object({
  drain: z.object({
    type: z.string({ error: 'missing field' }).min(1, 'missing field'),
    token: optionalText,
    host: optionalText,
    port: optionalText,
    drain_region: optionalText,
    url: optionalText,
  }),
});

export type DrainInput = z.infer<typeof drainBodySchema>['drain'];

/** DELETE: the url in the query string (Go client) or a JSON body (spec), flat or under `drain`. */
export const removeDrainQuery = z.object({ url: z.string().optional() });
export const removeDrainBody = z.object({
  url: z.string().optional(),
  drain: z.object({ url: z.string().optional() }).optional(),
});

// ---- Answers ----

/** A drain as the list shows it: the url is also its key for DELETE. */
export const drainList = z.object({
  drains: z.array(z.object({ app_id: z.string(), url: z.string() }).meta({ id: 'LogDrain' })),
});
export const drainEnvelope = z.object({ drain: z.object({ url: z.string() }) });
