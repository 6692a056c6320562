import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock } from '../../shared/clock.ts';
import { objectId } from '../../shared/ids.ts';
import { type AddonsService } from '../addons/addons.service.ts';
import { type AddonRow } from '../addons/addons.store.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { type EventsService } from '../events/events.service.ts';
import { normaliseDrain } from './drain-types.ts';
import { type DrainDispatcher } from './drains.dispatcher.ts';
import { type DrainInput } from './drains.schemas.ts';
import { type DrainRow, type DrainsStore } from './drains.store.ts';

export interface DrainsServiceDeps {
  db: Db;
  store: DrainsStore;
  apps: AppsService;
  addons: AddonsService;
  events: EventsService;
  dispatcher: DrainDispatcher;
  clock: Clock;
  mode: 'network' | 'file';
}

/** Log drains of an app (#31, #33, #35) or of one of its addons (#32, #34, #36). */
export function createDrainsService(deps: DrainsServiceDeps) {
  const { store } = deps;

  function scope(
    user: UserRow,
    appParam: string,
    addonId: string | undefined,
  ): { app: AppRow; addon: AddonRow | null } {
    if (addonId === undefined) return { app: deps.apps.visibleApp(user, appParam), addon: null };
    return deps.addons.visibleAddon(user, appParam, addonId);
  }

  /** Events carry the url; addon ones also the addon's uuid and name (go-scalingo events_structs.go). */
  function typeData(row: DrainRow, addon: AddonRow | null) {
    return addon
      ? { url: row.url, addon_uuid: addon.id, addon_name: deps.addons.providerName(addon) }
      : { url: row.url };
  }

  return {
    list(user: UserRow, appParam: string, addonId?: string) {
      const { app, addon } = scope(user, appParam, addonId);
      return store.list(app.id, addon?.id ?? null).map((d) => ({ app_id: d.app_id, url: d.url }));
    },

    add(user: UserRow, appParam: string, addonId: string | undefined, input: DrainInput): { url: string } {
      const { app, addon } = scope(user, appParam, addonId);
      const d = normaliseDrain(input, deps.mode);
      if (store.byUrl(app.id, addon?.id ?? null, d.url))
        throw ApiError.invalid('url', `a drain with this url already exists (${d.url})`);
      const row: DrainRow = {
        id: objectId(deps.clock.now()),
        app_id: app.id,
        addon_id: addon?.id ?? null,
        type: d.type,
        url: d.url,
        host: d.host || null,
        port: d.port || null,
        token: d.token || null,
        drain_region: d.drain_region || null,
        transport: d.transport,
        created_at: deps.clock.now(),
      };
      tx(deps.db, () => {
        store.insert(row);
        deps.events.record({
          type: addon ? 'new_addon_log_drain' : 'new_log_drain',
          app,
          user,
          typeData: typeData(row, addon),
        });
      });
      deps.dispatcher.add(row);
      return { url: row.url };
    },

    /** By the url the list shows (JSON body per the spec, query string per the Go CLI). */
    remove(user: UserRow, appParam: string, addonId: string | undefined, url: string | undefined): void {
      const { app, addon } = scope(user, appParam, addonId);
      if (!url) throw ApiError.invalid('url', 'missing field: the drain url, as the list shows it');
      const row = store.byUrl(app.id, addon?.id ?? null, url);
      if (!row) throw ApiError.notFound('log_drain');
      tx(deps.db, () => {
        store.delete(row.id);
        deps.events.record({
          type: addon ? 'delete_addon_log_drain' : 'delete_log_drain',
          app,
          user,
          typeData: typeData(row, addon),
        });
      });
      deps.dispatcher.remove(row);
    },

    /** Every app drain starts delivering at emulator start. */
    start(): void {
      for (const row of [...store.allAppDrains(), ...store.allAddonDrains()]) deps.dispatcher.add(row);
    },
  };
}

export type DrainsService = ReturnType<typeof createDrainsService>;
