import { type Db } from '../../db/database.ts';

export interface AddonBackupRow {
  id: string;
  addon_id: string;
  name: string;
  status: 'scheduled' | 'running' | 'done' | 'error';
  method: string;
  size: number;
  error: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

/** Backups of real addon servers (migration 015): one row per archive made. */
export function createAddonBackupsStore(db: Db) {
  const s = {
    byId: db.prepare<[string], AddonBackupRow>('SELECT * FROM addon_backups WHERE id = ?'),
    forAddon: db.prepare<[string], AddonBackupRow>(
      'SELECT * FROM addon_backups WHERE addon_id = ? ORDER BY created_at DESC, rowid DESC',
    ),
    insert: db.prepare(
      'INSERT INTO addon_backups (id, addon_id, name, status, method, size, error, created_at, started_at, ' +
        'finished_at) VALUES (@id, @addon_id, @name, @status, @method, @size, @error, @created_at, @started_at, ' +
        '@finished_at)',
    ),
    start: db.prepare("UPDATE addon_backups SET status = 'running', started_at = ? WHERE id = ?"),
    finish: db.prepare('UPDATE addon_backups SET status = ?, size = ?, error = ?, finished_at = ? WHERE id = ?'),
    // Left running by a stop of the emulator: the dump was cut, the archive is not whole.
    interrupted: db.prepare(
      "UPDATE addon_backups SET status = 'error', error = 'interrupted by a stop of the emulator' WHERE status IN ('scheduled', 'running')",
    ),
    delete: db.prepare('DELETE FROM addon_backups WHERE id = ?'),
  };
  return {
    byId: (id: string) => s.byId.get(id),
    forAddon: (addonId: string) => s.forAddon.all(addonId),
    insert: (row: AddonBackupRow) => void s.insert.run(row),
    start: (id: string, at: number) => void s.start.run(at, id),
    finish: (id: string, status: 'done' | 'error', size: number, error: string | null, at: number) =>
      void s.finish.run(status, size, error, at, id),
    markInterrupted: () => s.interrupted.run().changes,
    delete: (id: string) => void s.delete.run(id),
  };
}

export type AddonBackupsStore = ReturnType<typeof createAddonBackupsStore>;
