import { type Db } from '../../db/database.ts';

export interface OperationRow {
  id: string;
  app_id: string;
  type: string;
  status: 'pending' | 'running' | 'done' | 'error';
  error: string | null;
  data: string; // JSON
  created_at: number;
  finished_at: number | null;
}

/** Operations. Maps operation id → app, type, status and outcome. */
export function createOperationsStore(db: Db) {
  const s = {
    insert: db.prepare(
      'INSERT INTO operations (id, app_id, type, status, error, data, created_at, finished_at) ' +
        'VALUES (@id, @app_id, @type, @status, @error, @data, @created_at, @finished_at)',
    ),
    get: db.prepare<[string, string], OperationRow>('SELECT * FROM operations WHERE app_id = ? AND id = ?'),
    finish: db.prepare('UPDATE operations SET status = ?, error = ?, finished_at = ? WHERE id = ?'),
    setStatus: db.prepare('UPDATE operations SET status = ? WHERE id = ?'),
    setData: db.prepare('UPDATE operations SET data = ? WHERE id = ?'),
    unfinished: db.prepare<[], OperationRow>("SELECT * FROM operations WHERE status IN ('pending', 'running')"),
  };
  return {
    insert: (row: OperationRow) => void s.insert.run(row),
    get: (appId: string, id: string) => s.get.get(appId, id),
    finish: (id: string, status: 'done' | 'error', error: string | null, at: number) =>
      void s.finish.run(status, error, at, id),
    setStatus: (id: string, status: OperationRow['status']) => void s.setStatus.run(status, id),
    setData: (id: string, data: Record<string, unknown>) => void s.setData.run(JSON.stringify(data), id),
    unfinished: () => s.unfinished.all(),
  };
}

export type OperationsStore = ReturnType<typeof createOperationsStore>;
