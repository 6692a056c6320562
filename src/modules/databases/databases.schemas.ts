import { z } from 'zod';
import { lazySchema } from '../../http/api-schemas.ts';
import { databaseResource } from '../addons/addons.schemas.ts';
import { appName, appResource } from '../apps/apps.schemas.ts';

/** go-scalingo DatabaseCreateParams: sent at the body's root; `{database: {...}}` is read too. */
export const createDatabaseSchema = lazySchema(() =>
  z.object({
    database: z.object({
      addon_provider_id: z.string().min(1, 'missing field'),
      plan_id: z.string().min(1, 'missing field'),
      name: appName(48),
      project_id: z.string().max(64).optional(),
    }),
  }),
);

/** go-scalingo DatabaseNG: the app's id and name, its project, technology (provider id), plan name, and the DB API's Database. */
export const databaseNg = lazySchema(() =>
  z
    .object({
      id: z.string(),
      name: z.string(),
      project_id: z.string(),
      technology: z.string(),
      plan: z.string(),
      database: databaseResource(),
      app: appResource,
    })
    .meta({ id: 'DatabaseNG' }),
);
export const databaseNgEnvelope = lazySchema(() => z.object({ database: databaseNg() }));
export const databaseNgList = lazySchema(() => z.object({ databases: z.array(databaseNg()) }));

/** go-scalingo FirewallRuleCreateParams. */
export const createFirewallRuleSchema = lazySchema(() =>
  z.object({
    type: z.enum(['custom_range', 'managed_range']),
    cidr: z.string().max(64).optional(),
    label: z.string().max(255).optional(),
    range_id: z.string().max(128).optional(),
  }),
);
export const firewallRule = lazySchema(() =>
  z
    .object({
      id: z.string(),
      type: z.string(),
      cidr: z.string(),
      label: z.string(),
      range_id: z.string(),
      database_id: z.string(),
    })
    .meta({ id: 'FirewallRule' }),
);
export const firewallRuleEnvelope = lazySchema(() => z.object({ rule: firewallRule() }));
export const firewallRuleList = lazySchema(() => z.object({ rules: z.array(firewallRule()) }));
export const managedRangeList = lazySchema(() =>
  z.object({ ranges: z.array(z.object({ id: z.string(), name: z.string() })) }),
);
