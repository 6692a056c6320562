import { z } from 'zod';
import { lazySchema } from '../../http/api-schemas.ts';

/** POST /_emulator/dashboard/session: the user to act as (default: the first configured one). */
export const sessionSchema = lazySchema(() => z.object({ user: z.string().min(1).max(255).optional() }).strict());

/** GET /_emulator/dashboard/apps/:app/alert-states?ids=a,b */
export const alertStatesQuery = lazySchema(() => z.object({ ids: z.string().optional() }));

// ---- Answers ----

const who = lazySchema(() => z.object({ username: z.string(), email: z.string() }));

export const sessionAnswer = lazySchema(() =>
  z.object({
    session: z.object({ bearer: z.string(), expires_in: z.number().int(), user: who() }),
    users: z.array(who()),
  }),
);

export const alertStatesAnswer = lazySchema(() => z.object({ alert_states: z.record(z.string(), z.boolean()) }));
