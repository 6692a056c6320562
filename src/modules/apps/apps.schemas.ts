import { z } from 'zod';

// App names: lower case letters, digits and single inner hyphens; 6–48 characters (child apps 6–32).
const NAME_CHARS = /^[a-z0-9-]+$/;

export function appName(max: number) {
  return z
    .string({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a string') })
    .superRefine((name, ctx) => {
      if (name.length < 6) ctx.addIssue({ code: 'custom', message: 'is too short (minimum is 6 characters)' });
      else if (name.length > max) ctx.addIssue({ code: 'custom', message: `is too long (maximum is ${max} characters)` });
      if (!NAME_CHARS.test(name)) ctx.addIssue({ code: 'custom', message: 'is invalid: use lower case letters, digits and hyphens only' });
      else if (/^-|-$/.test(name)) ctx.addIssue({ code: 'custom', message: 'is invalid: it cannot start or end with a hyphen' });
      else if (name.includes('--')) ctx.addIssue({ code: 'custom', message: 'is invalid: it cannot contain two hyphens in a row' });
    });
}

export const createAppSchema = z.object({
  app: z.object({
    name: appName(48),
    // git would read a value starting with '-' as an option (`--upload-pack=…`).
    git_source: z.string().min(1).max(2048).refine((v) => !v.startsWith('-'), 'is invalid: it cannot start with a hyphen').nullish(),
    stack_id: z.string().min(1).nullish(),
    // go-scalingo AppsCreateOpts.ProjectID (omitempty); the projects module checks and applies it.
    project_id: z.string().min(1).nullish(),
  }),
});

export const createChildAppSchema = z.object({
  app: z.object({ name: appName(32) }),
});

export const renameSchema = z.object({
  current_name: z.string({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a string') }),
  new_name: appName(48),
});

/** PATCH /v1/apps/:app — settings (#7). Unknown keys are ignored, as the platform's clients send extra ones. */
export const settingsSchema = z.object({
  app: z.object({
    force_https: z.boolean().optional(),
    sticky_session: z.boolean().optional(),
    router_logs: z.boolean().optional(),
    stack_id: z.string().min(1).optional(),
  }),
});

/** PATCH /v1/apps/:app — ownership transfer (#6). */
export const transferSchema = z.object({
  app: z.object({ owner: z.string().email('must be the e-mail of a user') }),
});
