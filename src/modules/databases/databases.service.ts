// Dedicated databases ("Database NG", go-scalingo databases_preview.go): on the platform a dedicated
// database is an app holding one database addon. Creating one makes the app (in the given project)
// and provisions its addon on a real server; the list and the show answer the DatabaseNG shape; the
// app's deletion (DELETE /v1/apps/:id, as the clients do it) removes the database with its server.
import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock } from '../../shared/clock.ts';
import { defined } from '../../shared/defined.ts';
import { type AddonServers } from '../addons/addon-servers.ts';
import { DEDICATED_PROVIDERS, findPlan, findProvider, isDedicated } from '../addons/addons.catalog.ts';
import { type AddonsService } from '../addons/addons.service.ts';
import { type AddonRow } from '../addons/addons.store.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { databaseJson } from './database-json.ts';
import { type DatabaseSettingsService } from './database-settings.ts';
import { type DatabasesStore } from './databases.store.ts';

export interface DatabasesServiceDeps {
  db: Db;
  store: DatabasesStore;
  apps: AppsService;
  addons: AddonsService;
  servers?: AddonServers;
  settings: DatabaseSettingsService;
  clock: Clock;
  projects?: {
    check(user: UserRow, id: string | null | undefined): void;
    assign(app: AppRow, id: string | null | undefined): AppRow;
    ofApp(app: AppRow): { id: string };
  };
}

export interface CreateDatabaseInput {
  addon_provider_id: string;
  plan_id: string;
  name: string;
  project_id?: string;
}

export function createDatabasesService(deps: DatabasesServiceDeps) {
  const { store, apps, addons } = deps;

  /** The addon row of a dedicated database app (its only addon). */
  function addonOf(user: UserRow, app: AppRow): AddonRow {
    const row = defined(store.byApp(app.id), `dedicated database ${app.id}`);
    return addons.visibleAddon(user, app.id, row.addon_id).addon;
  }

  /** The DB API's Database of an addon (status read from Docker when the addon says it runs). */
  async function describe(addon: AddonRow, appName: string) {
    const server = deps.servers?.server(addon.id);
    const running = server && addon.status === 'running' ? !!(await deps.servers?.running(addon.id)) : undefined;
    return databaseJson(addon, {
      appName,
      server,
      running,
      settings: deps.settings.get(addon.id),
      dedicatedAppId: store.byAddon(addon.id)?.app_id,
    });
  }

  async function ngJson(user: UserRow, app: AppRow) {
    const addon = addonOf(user, app);
    const provider = findProvider(addon.provider_id);
    return {
      id: app.id,
      name: app.name,
      project_id: deps.projects?.ofApp(app).id ?? '',
      technology: addon.provider_id,
      plan: (provider && findPlan(provider, addon.plan_id)?.name) ?? addon.plan_id,
      database: await describe(addon, app.name),
    };
  }

  return {
    describe,
    ngJson,
    isDedicatedAddon: (addonId: string) => !!store.byAddon(addonId),

    /** POST /v1/databases: the app, then its addon on a real server (the database is `creating` until it answers). */
    create(user: UserRow, input: CreateDatabaseInput): AppRow {
      const provider = findProvider(input.addon_provider_id);
      if (!provider || !isDedicated(provider.id)) {
        throw ApiError.invalid(
          'addon_provider_id',
          `is not a dedicated database technology (known: ${DEDICATED_PROVIDERS.map((p) => p.id).join(', ')})`,
        );
      }
      const plan = findPlan(provider, input.plan_id);
      if (!plan)
        throw ApiError.invalid(
          'plan_id',
          `is not a plan of ${provider.id} (plans: ${provider.plans.map((p) => p.name).join(', ')})`,
        );
      if (!deps.servers)
        throw ApiError.badRequest(
          'dedicated databases run a real server: start the emulator with addon servers on (addons.servers)',
        );
      deps.projects?.check(user, input.project_id);
      return tx(deps.db, () => {
        // The flag the CLI reads to tell a database from an app (Scalingo/cli utils/database.go: user management, no `run`).
        const created = apps.create(user, { name: input.name }, { flags: { 'dedicated-database': true } });
        const app = deps.projects ? deps.projects.assign(created, input.project_id) : created;
        const addon = addons.provision(
          user,
          app.id,
          { addon_provider_id: provider.id, plan_id: plan.id },
          { dedicated: true },
        );
        store.insert({ app_id: app.id, addon_id: addon.id, created_at: deps.clock.now() });
        return app;
      });
    },

    /** The endpoints a client reaches the database at: its server's address (public-rw): published port, or network alias. */
    async endpoints(user: UserRow, app: AppRow) {
      const addon = addonOf(user, app);
      const r = await deps.servers?.running(addon.id);
      if (!r?.address) return [];
      const { host, port } = r.address;
      return [{ id: `${addon.id}-public-rw`, database_id: app.id, hostname: host, port, type: 'public-rw' }];
    },

    /** The dedicated databases the user sees (owned or collaborated apps). */
    list(user: UserRow): AppRow[] {
      return apps.list(user).filter((a) => store.byApp(a.id));
    },

    /** A dedicated database by its id (the app's id) or name; 404 {resource: "database"} otherwise. */
    find(user: UserRow, idOrName: string): AppRow {
      let app: AppRow;
      try {
        app = apps.visibleApp(user, idOrName);
      } catch {
        throw ApiError.notFound('database');
      }
      if (!store.byApp(app.id)) throw ApiError.notFound('database');
      return app;
    },
  };
}

export type DatabasesService = ReturnType<typeof createDatabasesService>;
