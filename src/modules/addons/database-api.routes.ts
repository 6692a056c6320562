// The database API (SCALINGO_DB_URL, prefix /api) as the official clients call it for an addon:
// `addons-info` reads the database, `logs --addon`, `backups`, `backups-*`, `database-users-*`,
// `maintenance-*`, `addons-config` and the rest read or change what a database server has. What a
// real server gives is in database-features.routes.ts (mounted first); every other call gets a 400
// `{error}` that says which feature the addon lacks.
import { ApiRoutes } from '../../http/api-routes.ts';
import { ERROR_BODY } from '../../http/api-schemas.ts';
import { isoDate } from '../../shared/clock.ts';
import { type AddonServers } from './addon-servers.ts';
import { findPlan, findProvider } from './addons.catalog.ts';
import { databaseEnvelope } from './addons.schemas.ts';
import { type AddonsService } from './addons.service.ts';
import { type AddonRow } from './addons.store.ts';
import { DATABASE_API_BASES, featureOf, lacks, tokenAddon } from './database-api.ts';

const ALL_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as ('get' | 'post' | 'put' | 'patch' | 'delete')[];

export interface DatabaseApiDeps {
  addons: AddonsService;
  appName: (appId: string) => string;
  servers?: AddonServers;
  /** The Database of an addon that runs a real server (status, version, settings); stand-ins are answered here. */
  describe?: (addon: AddonRow, appName: string) => Promise<unknown>;
}

export function databaseApiRoutes(deps: DatabaseApiDeps) {
  const { addons } = deps;
  const r = new ApiRoutes('database-api');

  for (const base of DATABASE_API_BASES) {
    // go-scalingo Database (databases.go): enough for `addons-info` to print the database's lines.
    r.add(
      {
        method: 'get',
        path: `${base}/databases/:id`,
        summary: 'Get the database of an addon',
        auth: 'addon',
        responses: { 200: databaseEnvelope },
      },
      async (c, { params }) => {
        const addon = tokenAddon(addons, c, params.id);
        if (deps.describe && deps.servers?.server(addon.id))
          return c.json({ database: await deps.describe(addon, deps.appName(addon.app_id)) });
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
      },
    );
    r.add(
      {
        method: ALL_METHODS,
        path: `${base}/databases/:id/*`,
        summary: "Any other feature of an addon's database: a 400 saying which feature the addon lacks",
        auth: 'addon',
        responses: { 400: ERROR_BODY },
      },
      (c, { params }) => {
        const id = params.id;
        throw lacks(deps.servers, tokenAddon(addons, c, id), featureOf(c.req.path, id));
      },
    );
    r.add(
      {
        method: ALL_METHODS,
        path: `${base}/*`,
        summary: 'Any other call of the database API: a 400 saying the addon lacks it',
        auth: 'addon',
        responses: { 400: ERROR_BODY },
      },
      (c) => {
        throw lacks(deps.servers, tokenAddon(addons, c, undefined), 'database server features');
      },
    );
  }
  return r;
}
