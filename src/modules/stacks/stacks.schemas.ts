import { z } from 'zod';
import { isoDateTime } from '../../http/api-schemas.ts';

// ---- Answers ----

/** go-scalingo's Stack (stacks.routes.ts). */
export const stackResource = z
  .object({
    id: z.string(),
    created_at: isoDateTime,
    name: z.string(),
    description: z.string(),
    base_image: z.string(),
    default: z.boolean(),
    // go-scalingo reads a "2006-01-02" date or null; no configured stack is deprecated.
    deprecated_at: z.string().nullable(),
  })
  .meta({ id: 'Stack' });

export const stackList = z.object({ stacks: z.array(stackResource) });
