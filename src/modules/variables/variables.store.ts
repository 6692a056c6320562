import { type Db } from '../../db/database.ts';

export interface VariableRow {
  id: string;
  app_id: string;
  name: string;
  value: string;
}

/** Environment variables. Maps (app, name) → value. */
export function createVariablesStore(db: Db) {
  const s = {
    all: db.prepare<[string], VariableRow>('SELECT * FROM variables WHERE app_id = ? ORDER BY name'),
    byId: db.prepare<[string, string], VariableRow>('SELECT * FROM variables WHERE app_id = ? AND id = ?'),
    byName: db.prepare<[string, string], VariableRow>('SELECT * FROM variables WHERE app_id = ? AND name = ?'),
    insert: db.prepare('INSERT INTO variables (id, app_id, name, value) VALUES (@id, @app_id, @name, @value)'),
    update: db.prepare('UPDATE variables SET value = ? WHERE id = ?'),
    delete: db.prepare('DELETE FROM variables WHERE id = ?'),
  };
  return {
    all: (appId: string) => s.all.all(appId),
    byId: (appId: string, id: string) => s.byId.get(appId, id),
    byName: (appId: string, name: string) => s.byName.get(appId, name),
    insert: (row: VariableRow) => void s.insert.run(row),
    update: (id: string, value: string) => void s.update.run(value, id),
    delete: (id: string) => void s.delete.run(id),
    asEnv: (appId: string): Record<string, string> =>
      Object.fromEntries(s.all.all(appId).map((v) => [v.name, v.value])),
  };
}

export type VariablesStore = ReturnType<typeof createVariablesStore>;
