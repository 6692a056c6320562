import { z } from 'zod';
import { isoDateTime, paginationMeta } from '../../http/api-schemas.ts';

// POST /v1/apps/:app/deployments: an archive URL (or the emulator's own source URL, or a local path).
export const createDeploymentSchema = z.object({
  deployment: z.object({
    source_url: z.string().min(1, "can't be blank").max(4096),
    git_ref: z
      .string()
      .max(256)
      .refine((v) => !v.startsWith('-'), 'is invalid: it cannot start with a hyphen')
      .nullish(),
  }),
});

// ---- Answers ----

/** deployments.service.ts `toJson`. */
export const deploymentResource = z
  .object({
    id: z.string(),
    app_id: z.string(),
    created_at: isoDateTime,
    finished_at: isoDateTime.nullable(),
    status: z.string(),
    git_ref: z.string().nullable(),
    type: z.enum(['archive', 'deployment']),
    image: z.string().nullable(),
    registry: z.string(),
    /** Seconds; 0 while running. */
    duration: z.number().int(),
    pusher: z
      .object({
        id: z.string(),
        username: z.string(),
        email: z.string(),
        fullname: z.string(),
        flags: z.record(z.string(), z.unknown()),
      })
      .nullable(),
    links: z.object({ output: z.string() }),
  })
  .meta({ id: 'Deployment' });

export const deploymentEnvelope = z.object({ deployment: deploymentResource });
export const deploymentList = z.object({ deployments: z.array(deploymentResource), meta: paginationMeta });
