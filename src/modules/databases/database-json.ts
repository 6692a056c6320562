// The database API's Database resource (go-scalingo databases.go), one builder for every route that
// answers it: GET /api/databases/:id, and the `database` of a dedicated database (POST/GET /v1/databases).
import { isoDate } from '../../shared/clock.ts';
import { ADDON_KINDS, type AddonKind } from '../addons/addon-kinds.ts';
import { type AddonServerRow } from '../addons/addon-servers.store.ts';
import { findPlan, findProvider } from '../addons/addons.catalog.ts';
import { type AddonRow } from '../addons/addons.store.ts';
import { type DatabaseSettings } from './database-settings.ts';

/** What the image recipes install (Debian bookworm): the version the database API reports. */
const VERSIONS: Record<AddonKind, string> = { postgresql: '15', mysql: '10.11', redis: '7.0' };

export interface DatabaseJsonContext {
  appName: string;
  /** The addon's real server, when it has one. */
  server?: AddonServerRow;
  /** Whether its container runs now (undefined: not asked). */
  running?: boolean;
  settings: DatabaseSettings;
  /** The app id when the addon is a dedicated database's: the database's id on the database API (docs/fidelity.md). */
  dedicatedAppId?: string;
}

/**
 * go-scalingo DatabaseStatus: creating while the server starts, running once it answers, stopped when
 * its container does not run (or could not start), updating/restarting as the addon says.
 */
export function databaseStatus(addon: AddonRow, running?: boolean): string {
  if (addon.status === 'provisioning') return 'creating';
  if (addon.status === 'error' || addon.status === 'suspended') return 'stopped';
  if (addon.status !== 'running') return addon.status;
  return running === false ? 'stopped' : 'running';
}

export function databaseJson(addon: AddonRow, ctx: DatabaseJsonContext) {
  const provider = findProvider(addon.provider_id);
  const spec = ctx.server ? ADDON_KINDS[ctx.server.kind as AddonKind] : undefined;
  const status = ctx.server ? databaseStatus(addon, ctx.running) : 'running';
  const version = spec ? VERSIONS[spec.kind] : '';
  return {
    id: ctx.dedicatedAppId ?? addon.id,
    created_at: isoDate(addon.created_at),
    resource_id: addon.resource_id,
    app_name: ctx.appName,
    encryption_at_rest: false,
    features: ctx.settings.features.map((name) => ({ name, status: 'ACTIVATED' })),
    plan: (provider && findPlan(provider, addon.plan_id)?.name) ?? addon.plan_id,
    status,
    type_id: addon.provider_id,
    type_name: spec?.kind ?? provider?.name.toLowerCase() ?? addon.provider_id,
    version_id: version,
    mongo_repl_set_name: '',
    instances:
      ctx.server && spec
        ? [
            {
              id: ctx.server.container_name,
              hostname: ctx.server.alias,
              port: spec.port,
              status: status === 'creating' ? 'booting' : status,
              type: 'db-node',
              features: [],
              private_ip: '',
            },
          ]
        : [],
    next_version_id: '',
    readable_version: spec ? `${provider?.name ?? spec.kind} ${version}` : 'stand-in (no server)',
    hostname: ctx.server?.alias ?? '',
    current_operation_id: '',
    cluster: false,
    periodic_backups_enabled: ctx.settings.periodicBackupsEnabled,
    periodic_backups_scheduled_at: ctx.settings.periodicBackupsHours,
    maintenance_window: {
      weekday_utc: ctx.settings.maintenanceWeekday,
      starting_hour_utc: ctx.settings.maintenanceHour,
      duration_in_hour: 8,
    },
  };
}
