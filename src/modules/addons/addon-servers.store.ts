import { type Db } from '../../db/database.ts';

export interface AddonServerRow {
  addon_id: string;
  app_id: string;
  kind: string;
  container_name: string;
  alias: string;
  username: string;
  password: string;
  database: string;
  memory_bytes: number;
  /** JSON array of the variable names the addon set on the app. */
  variables: string;
  created_at: number;
}

/** Real addon servers. Maps addon id → its container, alias on the app's network and credentials. */
export function createAddonServersStore(db: Db) {
  const s = {
    byAddon: db.prepare<[string], AddonServerRow>('SELECT * FROM addon_servers WHERE addon_id = ?'),
    forApp: db.prepare<[string], AddonServerRow>('SELECT * FROM addon_servers WHERE app_id = ? ORDER BY created_at'),
    all: db.prepare<[], AddonServerRow>('SELECT * FROM addon_servers ORDER BY created_at'),
    insert: db.prepare(
      'INSERT INTO addon_servers (addon_id, app_id, kind, container_name, alias, username, password, database, ' +
        'memory_bytes, variables, created_at) ' +
        'VALUES (@addon_id, @app_id, @kind, @container_name, @alias, @username, @password, @database, @memory_bytes, ' +
        '@variables, @created_at)',
    ),
    setMemory: db.prepare('UPDATE addon_servers SET memory_bytes = ? WHERE addon_id = ?'),
    delete: db.prepare('DELETE FROM addon_servers WHERE addon_id = ?'),
  };
  return {
    byAddon: (addonId: string) => s.byAddon.get(addonId),
    forApp: (appId: string) => s.forApp.all(appId),
    all: () => s.all.all(),
    insert: (row: AddonServerRow) => void s.insert.run(row),
    setMemory: (addonId: string, bytes: number) => void s.setMemory.run(bytes, addonId),
    delete: (addonId: string) => void s.delete.run(addonId),
  };
}

export type AddonServersStore = ReturnType<typeof createAddonServersStore>;
