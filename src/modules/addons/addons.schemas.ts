import { z } from 'zod';
import { isoDateTime, lazySchema } from '../../http/api-schemas.ts';

// ---- Requests ----

export const provisionSchema = lazySchema(() =>
  z.object({
    addon: z.object({
      addon_provider_id: z.string().min(1, 'missing field'),
      plan_id: z.string().min(1, 'missing field'),
      options: z.record(z.string(), z.unknown()).nullish(),
    }),
  }),
);
export const upgradeSchema = lazySchema(() =>
  z.object({ addon: z.object({ plan_id: z.string().min(1, 'missing field') }) }),
);

// The CLI's own rules (cli db/users/utils.go: 6–32 characters, password 24–64); the character sets are
// narrower so that no value needs quoting in the servers' SQL.
export const createUserSchema = lazySchema(() =>
  z.object({
    database_user: z
      .object({
        name: z
          .string()
          .regex(/^[a-z][a-z0-9_]{5,31}$/, 'must be 6 to 32 lowercase letters, digits or _, starting with a letter'),
        read_only: z.boolean().optional(),
        password: z
          .string()
          .regex(/^[A-Za-z0-9_.~+=!@#%^*,:-]{24,64}$/, 'must be 24 to 64 letters, digits or _.~+=!@#%^*,:-')
          .optional()
          .or(z.literal('')),
        password_confirmation: z.string().max(64).optional(),
      })
      .refine((u) => !u.password || u.password === u.password_confirmation, {
        message: "doesn't match the password",
        path: ['password_confirmation'],
      }),
  }),
);

// ---- Answers ----

export const addonPlan = lazySchema(() =>
  z
    .object({
      id: z.string(),
      name: z.string(),
      display_name: z.string(),
      price: z.number(),
      description: z.string(),
      position: z.number(),
      on_demand: z.boolean(),
      disabled: z.boolean(),
      disabled_alternative_plan_id: z.null(),
      sku: z.string(),
      hds_available: z.boolean(),
      to_be_discontinued: z.boolean(),
      trial_available: z.boolean(),
    })
    .meta({ id: 'AddonPlan' }),
);

const category = lazySchema(() =>
  z.object({ id: z.string(), name: z.string(), description: z.string(), position: z.number() }),
);

const providerFields = {
  id: z.string(),
  name: z.string(),
  logo_url: z.string(),
  short_description: z.string(),
  description: z.string(),
  category: category(),
  provider_name: z.string(),
  provider_url: z.string(),
  hds_available: z.boolean(),
};
export const addonProviderListed = lazySchema(() =>
  z.object({ ...providerFields, plans: z.array(addonPlan()) }).meta({ id: 'AddonProvider' }),
);
/** In an addon: the provider without its plans (or its id/name/logo when the catalogue lost it). */
const addonProviderRef = lazySchema(() =>
  z.union([z.object(providerFields), z.object({ id: z.string(), name: z.string(), logo_url: z.string() })]),
);
/** The addon's plan, or its id repeated when the catalogue has no such plan. */
const addonPlanRef = lazySchema(() =>
  z.union([
    addonPlan(),
    z.object({ id: z.string(), name: z.string(), display_name: z.string(), disabled_alternative_plan_id: z.null() }),
  ]),
);

export const addonResource = lazySchema(() =>
  z
    .object({
      id: z.string(),
      app_id: z.string(),
      resource_id: z.string(),
      status: z.string(),
      addon_provider: addonProviderRef(),
      plan: addonPlanRef(),
      provisioned_at: isoDateTime,
      deprovisioned_at: z.null(),
      updated_at: isoDateTime,
      /** The emulator's own, while provisioning or in error: the step under way or the reason. */
      status_message: z.string().optional(),
    })
    .meta({ id: 'Addon' }),
);

export const addonEnvelope = lazySchema(() => z.object({ addon: addonResource() }));
export const addonChange = lazySchema(() =>
  z.object({ addon: addonResource(), message: z.string(), variables: z.array(z.string()) }),
);
export const addonList = lazySchema(() => z.object({ addons: z.array(addonResource()) }));
export const addonProviderList = lazySchema(() => z.object({ addon_providers: z.array(addonProviderListed()) }));
export const addonPlanList = lazySchema(() => z.object({ plans: z.array(addonPlan()) }));
export const addonToken = lazySchema(() => z.object({ addon: z.object({ token: z.string() }) }));

/** go-scalingo Database (databases.go): what `addons-info` prints. */
export const databaseResource = lazySchema(() =>
  z
    .object({
      id: z.string(),
      created_at: isoDateTime,
      resource_id: z.string(),
      app_name: z.string(),
      encryption_at_rest: z.boolean(),
      features: z.array(z.unknown()),
      plan: z.string(),
      status: z.string(),
      type_id: z.string(),
      type_name: z.string(),
      version_id: z.string(),
      mongo_repl_set_name: z.string(),
      instances: z.array(z.unknown()),
      next_version_id: z.string(),
      readable_version: z.string(),
      hostname: z.string(),
      current_operation_id: z.string(),
      cluster: z.boolean(),
      periodic_backups_enabled: z.boolean(),
      periodic_backups_scheduled_at: z.array(z.number()),
      maintenance_window: z.object({
        weekday_utc: z.number(),
        starting_hour_utc: z.number(),
        duration_in_hour: z.number(),
      }),
    })
    .meta({ id: 'Database' }),
);
export const databaseEnvelope = lazySchema(() => z.object({ database: databaseResource() }));

export const databaseBackup = lazySchema(() =>
  z
    .object({
      id: z.string(),
      created_at: isoDateTime,
      started_at: isoDateTime,
      name: z.string(),
      size: z.number(),
      status: z.string(),
      database_id: z.string(),
      method: z.string(),
    })
    .meta({ id: 'DatabaseBackup' }),
);
export const databaseBackupEnvelope = lazySchema(() => z.object({ database_backup: databaseBackup() }));
export const databaseBackupList = lazySchema(() => z.object({ database_backups: z.array(databaseBackup()) }));
export const downloadUrl = lazySchema(() => z.object({ download_url: z.string() }));
export const logsUrl = lazySchema(() => z.object({ url: z.string() }));

const databaseUser = lazySchema(() =>
  z.object({
    name: z.string(),
    read_only: z.boolean(),
    protected: z.boolean(),
    dbms_attributes: z.object({ password_encryption: z.string() }).optional(),
  }),
);
export const databaseUserList = lazySchema(() =>
  z.object({ 'database-users': z.array(databaseUser()) }).meta({ id: 'DatabaseUsers' }),
);
export const databaseUserCreated = lazySchema(() =>
  z.object({ database_user: databaseUser().extend({ password: z.string() }) }),
);
