import { z } from 'zod';
import { isoDateTime, paginationMeta } from '../../http/api-schemas.ts';
import { setProjectSchema } from '../projects/projects.schemas.ts';

// App names: lower case letters, digits and single inner hyphens; 6–48 characters (child apps 6–32).
const NAME_CHARS = /^[a-z0-9-]+$/;

export function appName(max: number) {
  return z
    .string({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a string') })
    .superRefine((name, ctx) => {
      if (name.length < 6) ctx.addIssue({ code: 'custom', message: 'is too short (minimum is 6 characters)' });
      else if (name.length > max)
        ctx.addIssue({ code: 'custom', message: `is too long (maximum is ${max} characters)` });
      if (!NAME_CHARS.test(name))
        ctx.addIssue({ code: 'custom', message: 'is invalid: use lower case letters, digits and hyphens only' });
      else if (/^-|-$/.test(name))
        ctx.addIssue({ code: 'custom', message: 'is invalid: it cannot start or end with a hyphen' });
      else if (name.includes('--'))
        ctx.addIssue({ code: 'custom', message: 'is invalid: it cannot contain two hyphens in a row' });
    });
}

export const createAppSchema = z.object({
  app: z.object({
    name: appName(48),
    // git would read a value starting with '-' as an option (`--upload-pack=…`).
    git_source: z
      .string()
      .min(1)
      .max(2048)
      .refine((v) => !v.startsWith('-'), 'is invalid: it cannot start with a hyphen')
      .nullish(),
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

// ---- Answers ----

const userRef = z.object({ id: z.string(), username: z.string(), email: z.string() });

/** The Application resource (apps.view.ts `appJson`). */
export const appResource = z
  .object({
    id: z.string(),
    name: z.string(),
    region: z.string(),
    created_at: isoDateTime,
    updated_at: isoDateTime,
    git_url: z.string(),
    owner: userRef.nullable(),
    url: z.string(),
    base_url: z.string(),
    links: z.object({ deployments_stream: z.string() }),
    force_https: z.boolean(),
    sticky_session: z.boolean(),
    router_logs: z.boolean(),
    flags: z.record(z.string(), z.boolean()),
    limits: z.record(z.string(), z.unknown()).optional(),
    last_deployed_at: isoDateTime.nullable(),
    last_deployed_by: z.string().nullable(),
    last_deployment_id: z.string().nullable(),
    stack_id: z.string().nullable(),
    data_access_consent: z.object({
      app_id: z.string(),
      user_id: z.string(),
      containers_until: z.string().nullable(),
      database_until: z.string().nullable(),
    }),
    hds_resource: z.boolean(),
    private_networks_ids: z.array(z.string()),
    project: z.object({ id: z.string(), name: z.string() }).optional(),
    parent_app_name: z.string().optional(),
    status: z.string(),
    git_source: z.string().nullable().optional(),
  })
  .meta({ id: 'App' });

export const appEnvelope = z.object({ app: appResource });
export const appList = z.object({ apps: z.array(appResource) });
export const childAppList = z.object({ child_apps: z.array(appResource), meta: paginationMeta });

/** PUT/PATCH /v1/apps/:app: settings (#7), transfer (#6) or project, wrapped in `app` or not (go-scalingo). */
export const updateAppSchema = z.union([settingsSchema, transferSchema, z.object({ app: setProjectSchema })]);
