import { z } from 'zod';
import { isoDateTime } from '../../http/api-schemas.ts';

// ---- Answers ----

/** cron.service.ts `list`: a job of cron.json with its last and next run (size only when cron.json sets one). */
export const cronTaskList = z
  .object({
    jobs: z.array(
      z.object({
        command: z.string(),
        size: z.string().optional(),
        last_execution_date: isoDateTime.nullable(),
        next_execution_date: isoDateTime.nullable(),
      }),
    ),
  })
  .meta({ id: 'CronTasks' });
