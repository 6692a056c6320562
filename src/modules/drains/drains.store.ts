import { type Db } from '../../db/database.ts';
import { type Transport } from './drain-transports.ts';

export interface DrainRow {
  id: string;
  app_id: string;
  addon_id: string | null;
  type: string;
  url: string;
  host: string | null;
  port: string | null;
  token: string | null;
  drain_region: string | null;
  transport: Transport;
  created_at: number;
}

/** Log drains. Maps (app, addon or none) → drains, each identified by its url. */
export function createDrainsStore(db: Db) {
  const s = {
    forApp: db.prepare<[string], DrainRow>(
      'SELECT * FROM log_drains WHERE app_id = ? AND addon_id IS NULL ORDER BY created_at, id',
    ),
    forAddon: db.prepare<[string, string], DrainRow>(
      'SELECT * FROM log_drains WHERE app_id = ? AND addon_id = ? ORDER BY created_at, id',
    ),
    byUrl: db.prepare<[string, string, string], DrainRow>(
      "SELECT * FROM log_drains WHERE app_id = ? AND IFNULL(addon_id, '') = ? AND url = ?",
    ),
    allAppDrains: db.prepare<[], DrainRow>('SELECT * FROM log_drains WHERE addon_id IS NULL ORDER BY created_at'),
    allAddonDrains: db.prepare<[], DrainRow>('SELECT * FROM log_drains WHERE addon_id IS NOT NULL ORDER BY created_at'),
    insert: db.prepare(
      'INSERT INTO log_drains (id, app_id, addon_id, type, url, host, port, token, drain_region, transport, ' +
        'created_at) VALUES (@id, @app_id, @addon_id, @type, @url, @host, @port, @token, @drain_region, @transport, ' +
        '@created_at)',
    ),
    delete: db.prepare('DELETE FROM log_drains WHERE id = ?'),
    exists: db.prepare<[string], number>('SELECT COUNT(*) FROM log_drains WHERE id = ?').pluck(),
  };
  return {
    list: (appId: string, addonId: string | null) => (addonId ? s.forAddon.all(appId, addonId) : s.forApp.all(appId)),
    byUrl: (appId: string, addonId: string | null, url: string) => s.byUrl.get(appId, addonId ?? '', url),
    allAppDrains: () => s.allAppDrains.all(),
    allAddonDrains: () => s.allAddonDrains.all(),
    insert: (row: DrainRow) => void s.insert.run(row),
    delete: (id: string) => void s.delete.run(id),
    exists: (id: string) => (s.exists.get(id) ?? 0) > 0,
  };
}

export type DrainsStore = ReturnType<typeof createDrainsStore>;
