// The database API (prefix /api) for what the platform keeps beside the server: a dedicated database's
// firewall rules and the region's managed ranges (go-scalingo firewall_rules.go), and any real addon's
// maintenance window and periodic backups configuration (PATCH /databases/:id, maintenance.go).
import { z } from 'zod';
import { ApiRoutes } from '../../http/api-routes.ts';
import { lazySchema } from '../../http/api-schemas.ts';
import { ApiError } from '../../http/errors.ts';
import { parseWith, readJson } from '../../http/validate.ts';
import { type AddonServers } from '../addons/addon-servers.ts';
import { databaseEnvelope } from '../addons/addons.schemas.ts';
import { type AddonsService } from '../addons/addons.service.ts';
import { DATABASE_API_BASES, featureOf, lacks, tokenAddon } from '../addons/database-api.ts';
import { type DatabaseSettingsService } from './database-settings.ts';
import {
  createFirewallRuleSchema,
  firewallRuleEnvelope,
  firewallRuleList,
  managedRangeList,
} from './databases.schemas.ts';
import { type DatabasesService } from './databases.service.ts';
import { type FirewallRules } from './firewall-rules.ts';

const hour = lazySchema(() => z.number().int().min(0).max(23));
const updateDatabaseSchema = lazySchema(() =>
  z.object({
    database: z
      .object({
        periodic_backups_enabled: z.boolean().optional(),
        periodic_backups_scheduled_at: z.union([hour(), z.array(hour()).max(24)]).optional(),
        maintenance_window: z
          .object({ weekday_utc: z.number().int().min(0).max(6).optional(), starting_hour_utc: hour().optional() })
          .optional(),
      })
      .strict(),
  }),
);
const maintenanceList = lazySchema(() =>
  z.object({
    maintenance: z.array(z.unknown()),
    meta: z.object({
      pagination: z.object({
        current_page: z.number(),
        per_page: z.number(),
        prev_page: z.number(),
        next_page: z.number(),
        total_pages: z.number(),
        total_count: z.number(),
      }),
    }),
  }),
);

export interface DatabaseNgRoutesDeps {
  addons: AddonsService;
  servers?: AddonServers;
  databases: DatabasesService;
  settings: DatabaseSettingsService;
  firewall: FirewallRules;
  appName: (appId: string) => string;
}

export function databaseNgRoutes(deps: DatabaseNgRoutesDeps) {
  const { addons, databases, firewall } = deps;
  const r = new ApiRoutes('database-api');

  for (const base of DATABASE_API_BASES) {
    const dedicated = (c: Parameters<typeof tokenAddon>[1], id: string) => {
      const addon = tokenAddon(addons, c, id);
      if (!databases.isDedicatedAddon(addon.id))
        throw ApiError.badRequest(
          `firewall rules are a feature of dedicated databases (POST /v1/databases); addon ${addon.resource_id} belongs to an app`,
        );
      return addon;
    };
    const real = (c: Parameters<typeof tokenAddon>[1], id: string) => {
      const addon = tokenAddon(addons, c, id);
      const feature = featureOf(c.req.path, id);
      if (!deps.servers?.server(addon.id))
        throw lacks(
          deps.servers,
          addon,
          feature === 'database server features' ? 'database settings (maintenance window, periodic backups)' : feature,
        );
      return addon;
    };

    r.add(
      {
        method: 'get',
        path: `${base}/databases/:id/firewall_rules`,
        summary: 'List the firewall rules of a dedicated database',
        auth: 'addon',
        responses: { 200: firewallRuleList },
      },
      (c, { params }) => {
        const addon = dedicated(c, params.id);
        return c.json({ rules: firewall.list(addon.id).map((x) => firewall.json(x, addon.id)) });
      },
    );
    r.add(
      {
        method: 'post',
        path: `${base}/databases/:id/firewall_rules`,
        summary: 'Add a firewall rule (custom CIDR range or managed range), recorded',
        auth: 'addon',
        body: createFirewallRuleSchema,
        rawBody: true,
        responses: { 201: firewallRuleEnvelope },
      },
      async (c, { params }) => {
        const addon = dedicated(c, params.id);
        const raw = await readJson(c);
        const body = raw && typeof raw === 'object' && 'rule' in raw ? (raw as { rule: unknown }).rule : raw;
        const input = parseWith(z.object({ rule: createFirewallRuleSchema() }), { rule: body }, 'rule').rule;
        return c.json({ rule: firewall.json(firewall.create(addon.id, input), addon.id) }, 201);
      },
    );
    r.add(
      {
        method: 'delete',
        path: `${base}/databases/:id/firewall_rules/:rule`,
        summary: 'Remove a firewall rule',
        auth: 'addon',
        responses: { 204: null },
      },
      (c, { params }) => {
        const addon = dedicated(c, params.id);
        firewall.remove(addon.id, params.rule);
        return c.body(null, 204);
      },
    );
    r.add(
      {
        method: 'get',
        path: `${base}/firewall/managed_ranges`,
        summary: "The region's managed ranges a firewall rule can allow",
        auth: 'addon',
        responses: { 200: managedRangeList },
      },
      (c) => {
        tokenAddon(addons, c, undefined);
        return c.json({ ranges: firewall.ranges() });
      },
    );

    // DatabaseUpdatePeriodicBackupsConfig and DatabaseUpdateMaintenanceWindow: PATCH {database: {...}}.
    r.add(
      {
        method: 'patch',
        path: `${base}/databases/:id`,
        summary: 'Change the periodic backups configuration or the maintenance window',
        auth: 'addon',
        body: updateDatabaseSchema,
        rawBody: true,
        responses: { 200: databaseEnvelope },
      },
      async (c, { params }) => {
        const addon = real(c, params.id);
        const { database: d } = parseWith(updateDatabaseSchema(), await readJson(c), 'database');
        const at = d.periodic_backups_scheduled_at;
        deps.settings.update(addon.id, {
          ...(d.periodic_backups_enabled !== undefined ? { periodicBackupsEnabled: d.periodic_backups_enabled } : {}),
          ...(at !== undefined
            ? { periodicBackupsHours: Array.isArray(at) ? [...new Set(at)].sort((a, b) => a - b) : [at] }
            : {}),
          ...(d.maintenance_window?.weekday_utc !== undefined
            ? { maintenanceWeekday: d.maintenance_window.weekday_utc }
            : {}),
          ...(d.maintenance_window?.starting_hour_utc !== undefined
            ? { maintenanceHour: d.maintenance_window.starting_hour_utc }
            : {}),
        });
        return c.json({ database: await databases.describe(addon, deps.appName(addon.app_id)) });
      },
    );
    // No maintenance ever runs on a local server: the list is empty, and any id is not found.
    r.add(
      {
        method: 'get',
        path: `${base}/databases/:id/maintenance`,
        summary: 'List the past and planned maintenance operations (none locally)',
        auth: 'addon',
        responses: { 200: maintenanceList },
      },
      (c, { params }) => {
        real(c, params.id);
        return c.json({
          maintenance: [],
          meta: {
            pagination: { current_page: 1, per_page: 20, prev_page: 0, next_page: 0, total_pages: 0, total_count: 0 },
          },
        });
      },
    );
    r.add(
      {
        method: 'get',
        path: `${base}/databases/:id/maintenance/:maintenance`,
        summary: 'Get a maintenance operation (none locally)',
        auth: 'addon',
        responses: { 200: lazySchema(() => z.object({})) },
      },
      (c, { params }) => {
        real(c, params.id);
        throw ApiError.notFound('maintenance');
      },
    );
  }
  return r;
}
