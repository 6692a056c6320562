import { type Db } from '../../db/database.ts';

export interface AlertRow {
  id: string;
  app_id: string;
  container_type: string;
  metric: string;
  threshold: number; // the API's `limit`
  disabled: number;
  send_when_below: number;
  duration_before_trigger: number; // ns
  remind_every: number | null; // ns
  metadata: string; // JSON object
  created_at: number;
  updated_at: number;
}

/** Alerts. Maps alert id → rule; alert → its notifiers (ordered); app → alerts. */
export function createAlertsStore(db: Db) {
  const s = {
    forApp: db.prepare<[string], AlertRow>('SELECT * FROM alerts WHERE app_id = ? ORDER BY created_at, id'),
    byId: db.prepare<[string, string], AlertRow>('SELECT * FROM alerts WHERE id = ? AND app_id = ?'),
    enabled: db.prepare<[], AlertRow>('SELECT * FROM alerts WHERE disabled = 0'),
    insert: db.prepare(
      'INSERT INTO alerts (id, app_id, container_type, metric, threshold, disabled, send_when_below, ' +
        'duration_before_trigger, remind_every, metadata, created_at, updated_at) ' +
        'VALUES (@id, @app_id, @container_type, @metric, @threshold, @disabled, @send_when_below, ' +
        '@duration_before_trigger, @remind_every, @metadata, @created_at, @updated_at)',
    ),
    update: db.prepare(
      'UPDATE alerts SET container_type = @container_type, metric = @metric, threshold = @threshold, disabled = ' +
        '@disabled, send_when_below = @send_when_below, duration_before_trigger = @duration_before_trigger, remind_every ' +
        '= @remind_every, metadata = @metadata, updated_at = @updated_at WHERE id = @id',
    ),
    delete: db.prepare('DELETE FROM alerts WHERE id = ?'),
    notifierIds: db
      .prepare<[string], string>('SELECT notifier_id FROM alert_notifiers WHERE alert_id = ? ORDER BY position')
      .pluck(),
    clearNotifiers: db.prepare('DELETE FROM alert_notifiers WHERE alert_id = ?'),
    addNotifier: db.prepare('INSERT OR IGNORE INTO alert_notifiers (alert_id, notifier_id, position) VALUES (?, ?, ?)'),
  };
  return {
    forApp: (appId: string) => s.forApp.all(appId),
    byId: (appId: string, id: string) => s.byId.get(id, appId),
    enabled: () => s.enabled.all(),
    insert: (row: AlertRow) => void s.insert.run(row),
    update: (row: AlertRow) => void s.update.run(row),
    delete: (id: string) => void s.delete.run(id),
    notifierIds: (alertId: string) => s.notifierIds.all(alertId),
    /** Caller wraps in a transaction. */
    setNotifiers(alertId: string, ids: string[]): void {
      s.clearNotifiers.run(alertId);
      ids.forEach((id, i) => {
        s.addNotifier.run(alertId, id, i);
      });
    },
  };
}

export type AlertsStore = ReturnType<typeof createAlertsStore>;
