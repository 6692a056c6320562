// Dedicated databases and the database API's settings, firewall rules and logs archives (issue 22),
// built beside the addons service (wiring/addons.ts), whose routes they precede.
import { type Db } from '../db/database.ts';
import { type AddonBackups } from '../modules/addons/addon-backups.ts';
import { addonLogsArchivesRoutes } from '../modules/addons/addon-logs-archives.routes.ts';
import { createAddonRestores } from '../modules/addons/addon-restores.ts';
import { type AddonServers } from '../modules/addons/addon-servers.ts';
import { type AddonsService } from '../modules/addons/addons.service.ts';
import { databaseRestoresRoutes } from '../modules/addons/database-restores.routes.ts';
import { databaseUserPasswordsRoutes } from '../modules/addons/database-user-passwords.routes.ts';
import { type AppsService } from '../modules/apps/apps.service.ts';
import { type AppViewContext } from '../modules/apps/apps.view.ts';
import { databaseFeatureTogglesRoutes } from '../modules/databases/database-feature-toggles.routes.ts';
import { databaseNgRoutes } from '../modules/databases/database-ng.routes.ts';
import { createDatabaseSettings } from '../modules/databases/database-settings.ts';
import { createDatabasesService, type DatabasesServiceDeps } from '../modules/databases/databases.service.ts';
import { createDatabasesStore } from '../modules/databases/databases.store.ts';
import { createFirewallRules } from '../modules/databases/firewall-rules.ts';
import { type UrlSigner } from '../modules/logs/logs-url.ts';
import { type Clock } from '../shared/clock.ts';
import { type Logger } from '../shared/logger.ts';
import { type RouteGroup } from './area.ts';
import { lazyRoutes } from './lazy-routes.ts';

export interface DatabasesWiringDeps {
  db: Db;
  clock: Clock;
  region: string;
  apps: AppsService;
  addons: AddonsService;
  servers?: AddonServers;
  projects?: DatabasesServiceDeps['projects'];
  view: AppViewContext;
  signer: UrlSigner;
  apiUrl: () => string;
  backups?: AddonBackups;
  logger: Logger;
}

export function createDatabasesWiring(deps: DatabasesWiringDeps) {
  const store = createDatabasesStore(deps.db);
  const settings = createDatabaseSettings(store);
  const firewall = createFirewallRules({ store, clock: deps.clock, region: deps.region });
  const { addons, servers, clock, logger } = deps;
  const databases = createDatabasesService({
    db: deps.db,
    store,
    apps: deps.apps,
    addons,
    servers,
    settings,
    clock,
    projects: deps.projects,
  });
  const appName = (id: string) => deps.apps.find(id)?.name ?? id;
  const routes: RouteGroup[] = [
    lazyRoutes('databasesRoutes', () =>
      import('../modules/databases/databases.routes.ts').then((m) => m.databasesRoutes({ databases, view: deps.view })),
    ),
    databaseNgRoutes({ addons, servers, databases, settings, firewall, appName }),
  ];
  if (servers) {
    routes.push(addonLogsArchivesRoutes({ addons, servers, signer: deps.signer, apiUrl: deps.apiUrl }));
    routes.push(databaseUserPasswordsRoutes({ addons, servers }));
    routes.push(databaseFeatureTogglesRoutes({ addons, servers, settings }));
  }
  const restores =
    servers && deps.backups
      ? createAddonRestores({ servers, backups: deps.backups, clock, logger, setStatus: servers.setStatus })
      : undefined;
  if (servers && restores) routes.push(databaseRestoresRoutes({ addons, servers, restores }));
  return { databases, restores, routes };
}
