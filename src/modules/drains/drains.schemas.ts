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
