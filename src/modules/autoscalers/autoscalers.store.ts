import { type Db } from '../../db/database.ts';

export interface AutoscalerRow {
  id: string;
  app_id: string;
  container_type: string;
  metric: string;
  target: number;
  min_containers: number;
  max_containers: number;
  disabled: number;
  last_scale: number | null;
  created_at: number;
  updated_at: number;
}

/** Autoscalers. Maps autoscaler id → its app and container type (one per type of an app). */
export function createAutoscalersStore(db: Db) {
  const s = {
    ofApp: db.prepare<[string], AutoscalerRow>(
      'SELECT * FROM autoscalers WHERE app_id = ? ORDER BY created_at, container_type',
    ),
    one: db.prepare<[string, string], AutoscalerRow>('SELECT * FROM autoscalers WHERE app_id = ? AND id = ?'),
    byType: db.prepare<[string, string], AutoscalerRow>(
      'SELECT * FROM autoscalers WHERE app_id = ? AND container_type = ?',
    ),
    enabled: db.prepare<[], AutoscalerRow>('SELECT * FROM autoscalers WHERE disabled = 0'),
    insert: db.prepare(
      'INSERT INTO autoscalers (id, app_id, container_type, metric, target, min_containers, max_containers, disabled, ' +
        'last_scale, created_at, updated_at) ' +
        'VALUES (@id, @app_id, @container_type, @metric, @target, @min_containers, @max_containers, @disabled, ' +
        '@last_scale, @created_at, @updated_at)',
    ),
    update: db.prepare(
      'UPDATE autoscalers SET metric = @metric, target = @target, min_containers = @min_containers, max_containers = ' +
        '@max_containers, disabled = @disabled, updated_at = @updated_at WHERE id = @id',
    ),
    setLastScale: db.prepare('UPDATE autoscalers SET last_scale = ? WHERE id = ?'),
    disable: db.prepare('UPDATE autoscalers SET disabled = 1, updated_at = ? WHERE id = ?'),
    delete: db.prepare('DELETE FROM autoscalers WHERE id = ?'),
  };
  return {
    ofApp: (appId: string) => s.ofApp.all(appId),
    find: (appId: string, id: string) => s.one.get(appId, id),
    byType: (appId: string, type: string) => s.byType.get(appId, type),
    enabled: () => s.enabled.all(),
    insert: (row: AutoscalerRow) => void s.insert.run(row),
    update: (row: AutoscalerRow) => void s.update.run(row),
    setLastScale: (id: string, at: number) => void s.setLastScale.run(at, id),
    disable: (id: string, at: number) => void s.disable.run(at, id),
    delete: (id: string) => void s.delete.run(id),
  };
}

export type AutoscalersStore = ReturnType<typeof createAutoscalersStore>;
