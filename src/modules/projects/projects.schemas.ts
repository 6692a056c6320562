import { z } from 'zod';
import { isoDateTime } from '../../http/api-schemas.ts';

// go-scalingo: ProjectAdd sends {"project": {"name", "default"}} (both always), ProjectUpdate
// {"project": {"name"?, "default"?}} (omitempty: the API does not take "default": null).
const projectName = z
  .string({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a string') })
  .trim()
  .min(1, "can't be blank")
  .max(64, 'is too long (maximum is 64 characters)')
  .refine((n) => !/[\u0000-\u001f]/.test(n), 'cannot contain control characters');

export const createProjectSchema = z.object({
  project: z.object({ name: projectName, default: z.boolean().nullish() }),
});

export const updateProjectSchema = z.object({
  project: z.object({ name: projectName.optional(), default: z.boolean().optional() }),
});

/** PUT /v1/apps/:app {"project_id": "prj-…"} (go-scalingo AppsSetProject). */
export const setProjectSchema = z.object({
  project_id: z.string({ error: 'must be a string' }).min(1, "can't be blank"),
});

// ---- Answers ----

/** The Project resource (projects.service.ts `json`). */
export const projectResource = z
  .object({
    id: z.string(),
    name: z.string(),
    default: z.boolean(),
    flags: z.record(z.string(), z.boolean()),
    created_at: isoDateTime,
    updated_at: isoDateTime,
    owner: z.object({ id: z.string(), username: z.string(), email: z.string() }).nullable(),
  })
  .meta({ id: 'Project' });

export const projectEnvelope = z.object({ project: projectResource });
export const projectList = z.object({ projects: z.array(projectResource) });
