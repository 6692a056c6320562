// The database API (SCALINGO_DB_URL, prefix /api) as the official clients call it for an addon:
// `addons-info` reads the database, `logs --addon`, `backups`, `backups-*`, `database-users-*`,
// `maintenance-*`, `addons-config` and the rest read or change what a database server has. The stand-in
// addons run no server: the database itself is described, every other call gets a 400 `{error}` that
// says which feature the stand-in lacks (go-scalingo prints it as "400 Bad Request → …").
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { isoDate } from '../../shared/clock.ts';
import type { AddonsService } from './addons.service.ts';
import type { AddonRow } from './addons.store.ts';
import type { AddonServers } from './addon-servers.ts';
import { findPlan, findProvider } from './addons.catalog.ts';
import { pathParam } from '../../http/validate.ts';

/** What each path of the database API is about, for the message (first match wins). */
const FEATURES: [RegExp, string][] = [
  [/^\/logs_archives/, 'log archives'],
  [/^\/logs/, 'logs'],
  [/^\/backups|^\/periodic_backups|^\/pitr|^\/recovery/, 'backups'],
  [/^\/users/, 'database users'],
  [/^\/maintenance/, 'maintenance windows'],
  [/^\/features/, 'database features (force TLS, Internet access)'],
  [/^\/firewall_rules/, 'firewall rules'],
  [/^\/action|^\/databases|^\/collections|^\/tables/, 'database actions'],
];

export function databaseApiRoutes(deps: { addons: AddonsService; appName: (appId: string) => string; servers?: AddonServers }) {
  const { addons } = deps;
  const r = new Hono<AppEnv>();

  /** The addon the bearer token is for; 401 without a valid one, 404 for another addon. */
  function addonOf(c: Context<AppEnv>, id: string | undefined): AddonRow {
    const m = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '');
    const addon = m ? addons.addonOfToken(m[1]) : undefined;
    if (!addon) throw ApiError.unauthorized('a valid addon token is required: POST /v1/apps/:app/addons/:id/token gives one');
    if (id !== undefined && id !== addon.id) throw ApiError.notFound('database');
    return addon;
  }

  const lacks = (addon: AddonRow, feature: string) => {
    const provider = findProvider(addon.provider_id)?.name ?? addon.provider_id;
    // A real server runs (issue #15), but this API does not serve its features yet: say where they are.
    if (deps.servers?.server(addon.id)) {
      return ApiError.badRequest(
        `The ${provider} addon ${addon.resource_id} runs a real server in the Scalingo emulator, but its database API does not serve ${feature} yet. The server's output: GET /v1/apps/:app/addons/${addon.id}/server/logs; a dump made now: GET /v1/apps/:app/addons/${addon.id}/server/dump; the port published on 127.0.0.1: docker port.`,
      );
    }
    return ApiError.badRequest(
      `The ${provider} addon ${addon.resource_id} is a stand-in of the Scalingo emulator: no database server runs, so ${feature} are not available. Stand-in addons provide the addon resource, its plan, its log drains and its token.`,
    );
  };

  // go-scalingo Database (databases.go): enough for `addons-info` to print the database's lines.
  const showDatabase = (c: Context<AppEnv>) => {
    const addon = addonOf(c, c.req.param('id'));
    const provider = findProvider(addon.provider_id);
    return c.json({
      database: {
        id: addon.id,
        created_at: isoDate(addon.created_at),
        resource_id: addon.resource_id,
        app_name: deps.appName(addon.app_id),
        encryption_at_rest: false,
        features: [],
        plan: (provider && findPlan(provider, addon.plan_id)?.name) ?? addon.plan_id,
        status: 'running',
        type_id: addon.provider_id,
        type_name: provider?.name.toLowerCase() ?? addon.provider_id,
        version_id: '',
        mongo_repl_set_name: '',
        instances: [],
        next_version_id: '',
        readable_version: 'stand-in (no server)',
        hostname: '',
        current_operation_id: '',
        cluster: false,
        periodic_backups_enabled: false,
        periodic_backups_scheduled_at: [],
        maintenance_window: { weekday_utc: 0, starting_hour_utc: 0, duration_in_hour: 0 },
      },
    });
  };

  // SCALINGO_DB_URL=<api> gives /api/…; without it the clients use the region's database_api
  // (<api>/_emulator/databases, see /v1/regions), which gives /_emulator/databases/api/….
  for (const base of ['/api', '/_emulator/databases/api']) {
    r.get(`${base}/databases/:id`, showDatabase);
    r.all(`${base}/databases/:id/*`, (c) => {
      const id = pathParam(c, 'id');
      const addon = addonOf(c, id);
      const rest = c.req.path.slice(c.req.path.indexOf(`/databases/${id}`) + `/databases/${id}`.length);
      const feature = FEATURES.find(([re]) => re.test(rest))?.[1] ?? 'database server features';
      throw lacks(addon, feature);
    });
    r.all(`${base}/*`, (c) => {
      throw lacks(addonOf(c, undefined), 'database server features');
    });
  }
  return r;
}
