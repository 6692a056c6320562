import { z } from 'zod';
import { isoDateTime } from '../../http/api-schemas.ts';

export const addKeySchema = z.object({
  key: z.object({
    name: z.string().trim().min(1, "can't be blank").max(100, 'is too long (maximum is 100 characters)'),
    content: z.string().min(1, "can't be blank").max(16_384, 'is too long for an SSH public key'),
  }),
});

// ---- Answers ----

/** The Key resource (keys.service.ts `toJson`). */
export const keyResource = z
  .object({
    id: z.string(),
    name: z.string(),
    content: z.string(),
    fingerprint: z.string(),
    created_at: isoDateTime,
    owner: z.object({ id: z.string(), username: z.string(), email: z.string() }).nullable(),
  })
  .meta({ id: 'SshKey' });

export const keyEnvelope = z.object({ key: keyResource });
export const keyList = z.object({ keys: z.array(keyResource) });
