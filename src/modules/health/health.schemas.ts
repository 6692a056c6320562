import { z } from 'zod';
import { lazySchema } from '../../http/api-schemas.ts';

// ---- Answers ----

const unavailable = lazySchema(() => z.object({ status: z.literal('unavailable'), error: z.string() }));

/** GET /_emulator/health: each subsystem as probed (200, or 503 when the database does not answer). */
export const healthAnswer = lazySchema(() =>
  z
    .object({
      status: z.enum(['ok', 'degraded']),
      version: z.string(),
      uptime_seconds: z.number().int(),
      subsystems: z.object({
        database: z.union([z.object({ status: z.literal('ok'), file: z.string() }), unavailable()]),
        docker: z.union([
          z.object({ status: z.literal('ok'), version: z.string(), api_version: z.string() }),
          unavailable(),
        ]),
      }),
    })
    .meta({ id: 'EmulatorHealth' }),
);

/** GET /_emulator/billing: what the 402's `url` points to. */
export const billingAnswer = lazySchema(() => z.object({ billing: z.string(), how_to_lift: z.string() }));
