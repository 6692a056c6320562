import { z } from 'zod';
import { isoDateTime } from '../../http/api-schemas.ts';

// Query strings (documented; the services read and check them).
export const seriesQuery = z.object({
  since: z.string().optional().meta({ description: 'Hours back (default 24)' }),
  status_code: z.string().optional().meta({ description: 'router metric: 1XX … 5XX or all' }),
});
export const recommendedQuery = z.object({
  container_type: z.string().optional().meta({ description: 'Required for cpu, memory and swap' }),
});

// ---- Answers ----

/** One point of a series, and the recommended value (#25). */
export const statPoint = z.object({ time: isoDateTime, value: z.number() }).meta({ id: 'StatPoint' });

/** #23: the one bare-array endpoint. */
export const statSeries = z.array(statPoint);

/** #24: figures read from the engine now, per running container (stats.service.ts `realtime`). */
export const realtimeStats = z
  .object({
    stats: z.array(
      z.object({
        id: z.string(),
        cpu_usage: z.number(),
        memory_usage: z.number(),
        memory_limit: z.number(),
        highest_memory_usage: z.number(),
        swap_usage: z.number(),
        swap_limit: z.number(),
        highest_swap_usage: z.number(),
      }),
    ),
  })
  .meta({ id: 'ContainersStats' });
