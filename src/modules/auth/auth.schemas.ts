import { z } from 'zod';
import { isoDateTime } from '../../http/api-schemas.ts';

// The npm client posts {name}; the platform documents {token: {name}}. Both are accepted.
export const createTokenSchema = z.object({ name: z.string().trim().min(1, "can't be blank").max(255) });

/** POST /v1/tokens as documented: both shapes, for the document (the route reads either). */
export const createTokenBody = z.union([z.object({ token: createTokenSchema }), createTokenSchema]);

// ---- Answers ----

/** The Token resource (auth.routes.ts `tokenJson`); `token` (the secret) only on creation and renewal. */
export const tokenResource = z
  .object({
    id: z.string(),
    name: z.string(),
    created_at: isoDateTime,
    last_used_at: isoDateTime.nullable(),
    issued_at: isoDateTime,
    token: z.string().optional(),
  })
  .meta({ id: 'Token' });

export const tokenEnvelope = z.object({ token: tokenResource });
export const tokenList = z.object({ tokens: z.array(tokenResource) });
/** POST /v1/tokens/exchange: the bearer. */
export const bearerAnswer = z.object({ token: z.string() });

/** The User resource (auth.service.ts `publicUser`). */
export const userResource = z
  .object({
    id: z.string(),
    username: z.string(),
    fullname: z.string(),
    email: z.string(),
    flags: z.record(z.string(), z.boolean()),
  })
  .meta({ id: 'User' });
export const userEnvelope = z.object({ user: userResource });

/** The Region resource (GET /v1/regions). */
export const regionResource = z
  .object({
    name: z.string(),
    display_name: z.string(),
    api: z.string(),
    ssh: z.string(),
    dashboard: z.string(),
    database_api: z.string(),
    default: z.boolean(),
  })
  .meta({ id: 'Region' });
export const regionList = z.object({ regions: z.array(regionResource) });
