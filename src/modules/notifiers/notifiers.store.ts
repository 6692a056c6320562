import { type Db } from '../../db/database.ts';

export interface NotifierRow {
  id: string;
  app_id: string;
  name: string;
  platform: string; // platform name: email | slack | webhook | rocket_chat
  active: number;
  send_all_alerts: number;
  send_all_events: number;
  selected_event_ids: string; // JSON array
  type_data: string; // JSON object
  created_at: number;
  updated_at: number;
}

/** Notifiers. Maps notifier id → where an app's events go; app → notifiers. */
export function createNotifiersStore(db: Db) {
  const s = {
    forApp: db.prepare<[string], NotifierRow>('SELECT * FROM notifiers WHERE app_id = ? ORDER BY created_at, id'),
    byId: db.prepare<[string, string], NotifierRow>('SELECT * FROM notifiers WHERE id = ? AND app_id = ?'),
    activeForApp: db.prepare<[string], NotifierRow>(
      'SELECT * FROM notifiers WHERE app_id = ? AND active = 1 ORDER BY created_at, id',
    ),
    insert: db.prepare(
      'INSERT INTO notifiers (id, app_id, name, platform, active, send_all_alerts, send_all_events, ' +
        'selected_event_ids, type_data, created_at, updated_at) ' +
        'VALUES (@id, @app_id, @name, @platform, @active, @send_all_alerts, @send_all_events, @selected_event_ids, ' +
        '@type_data, @created_at, @updated_at)',
    ),
    update: db.prepare(
      'UPDATE notifiers SET name = @name, active = @active, send_all_alerts = @send_all_alerts, send_all_events = ' +
        '@send_all_events, selected_event_ids = @selected_event_ids, type_data = @type_data, updated_at = @updated_at ' +
        'WHERE id = @id',
    ),
    delete: db.prepare('DELETE FROM notifiers WHERE id = ?'),
  };
  return {
    forApp: (appId: string) => s.forApp.all(appId),
    byId: (appId: string, id: string) => s.byId.get(id, appId),
    activeForApp: (appId: string) => s.activeForApp.all(appId),
    insert: (row: NotifierRow) => void s.insert.run(row),
    update: (row: NotifierRow) => void s.update.run(row),
    delete: (id: string) => void s.delete.run(id),
  };
}

export type NotifiersStore = ReturnType<typeof createNotifiersStore>;
