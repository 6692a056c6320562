import { z } from 'zod';

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
export const setProjectSchema = z.object({ project_id: z.string({ error: 'must be a string' }).min(1, "can't be blank") });
