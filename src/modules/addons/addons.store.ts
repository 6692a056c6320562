import { type Db } from '../../db/database.ts';

export interface AddonRow {
  id: string;
  app_id: string;
  provider_id: string;
  plan_id: string;
  resource_id: string;
  status: string;
  created_at: number;
  updated_at: number;
}

/** Stand-in addons. Maps addon id → its app, provider and plan. */
export function createAddonsStore(db: Db) {
  const s = {
    forApp: db.prepare<[string], AddonRow>('SELECT * FROM addons WHERE app_id = ? ORDER BY created_at, id'),
    one: db.prepare<[string, string], AddonRow>('SELECT * FROM addons WHERE app_id = ? AND id = ?'),
    byId: db.prepare<[string], AddonRow>('SELECT * FROM addons WHERE id = ?'),
    insert: db.prepare(
      'INSERT INTO addons (id, app_id, provider_id, plan_id, resource_id, status, created_at, updated_at) ' +
        'VALUES (@id, @app_id, @provider_id, @plan_id, @resource_id, @status, @created_at, @updated_at)',
    ),
    setPlan: db.prepare('UPDATE addons SET plan_id = ?, updated_at = ? WHERE id = ?'),
    setStatus: db.prepare('UPDATE addons SET status = ? WHERE id = ?'),
    delete: db.prepare('DELETE FROM addons WHERE id = ?'),
  };
  return {
    forApp: (appId: string) => s.forApp.all(appId),
    find: (appId: string, id: string) => s.one.get(appId, id),
    byId: (id: string) => s.byId.get(id),
    insert: (row: AddonRow) => void s.insert.run(row),
    setPlan: (id: string, planId: string, at: number) => void s.setPlan.run(planId, at, id),
    setStatus: (id: string, status: string) => void s.setStatus.run(status, id),
    delete: (id: string) => void s.delete.run(id),
  };
}

export type AddonsStore = ReturnType<typeof createAddonsStore>;
