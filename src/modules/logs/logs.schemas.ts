import { z } from 'zod';
import { lazySchema } from '../../http/api-schemas.ts';
import { appResource } from '../apps/apps.schemas.ts';

// Query strings of the logs routes (documented; the service reads and checks them).
export const archivesQuery = lazySchema(() =>
  z.object({
    cursor: z.string().optional().meta({ description: 'next_cursor of the previous list (documentation, npm client)' }),
    page: z.string().optional().meta({ description: 'Page number (Go CLI)' }),
  }),
);

export const signedLogsQuery = lazySchema(() =>
  z.object({
    token: z.string().optional(),
    timestamp: z.string().optional(),
    n: z.string().optional().meta({ description: 'Number of lines (text mode)' }),
    filter: z.string().optional().meta({ description: 'Container type or name, or a `|`-separated list' }),
    stream: z
      .string()
      .optional()
      .meta({ description: '`true`: follow as Server-Sent Events (or a WebSocket upgrade)' }),
  }),
);

export const signedArchiveQuery = lazySchema(() =>
  z.object({ token: z.string().optional(), timestamp: z.string().optional() }),
);

// ---- Answers ----

/** #20: the app and a signed logs URL on the emulator's own port. */
export const logsUrlAnswer = lazySchema(() =>
  z.object({ app: appResource, logs_url: z.string() }).meta({ id: 'LogsUrl' }),
);

/** #21: newest first; `from`/`to` in the platform's free text ("Fri Mar 24 14:00:00 +0000 UTC 2017"). */
export const logsArchiveList = lazySchema(() =>
  z
    .object({
      next_cursor: z.string(),
      has_more: z.boolean(),
      archives: z.array(z.object({ url: z.string(), size: z.number().int(), from: z.string(), to: z.string() })),
    })
    .meta({ id: 'LogsArchives' }),
);
