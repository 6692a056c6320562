import { type Db } from '../../db/database.ts';

/** A source: maps source id → its creator, lifetime and, once uploaded, the stored archive's size. */
export interface SourceRow {
  id: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  size: number | null;
  uploaded_at: number | null;
}

export function createSourcesStore(db: Db) {
  const q = {
    insert: db.prepare<SourceRow>(
      'INSERT INTO sources (id, user_id, created_at, expires_at, size, uploaded_at) VALUES (@id, @user_id, @created_at, @expires_at, @size, @uploaded_at)',
    ),
    byId: db.prepare<[string], SourceRow>('SELECT * FROM sources WHERE id = ?'),
    uploaded: db.prepare<{ id: string; size: number; at: number }>(
      'UPDATE sources SET size = @size, uploaded_at = @at WHERE id = @id',
    ),
    expired: db.prepare<[number], SourceRow>('SELECT * FROM sources WHERE expires_at <= ?'),
    remove: db.prepare<[string]>('DELETE FROM sources WHERE id = ?'),
    countLive: db
      .prepare<[string, number], number>('SELECT COUNT(*) FROM sources WHERE user_id = ? AND expires_at > ?')
      .pluck(),
  };
  return {
    insert: (row: SourceRow) => void q.insert.run(row),
    byId: (id: string) => q.byId.get(id),
    markUploaded: (id: string, size: number, at: number) => void q.uploaded.run({ id, size, at }),
    expired: (now: number) => q.expired.all(now),
    remove: (id: string) => void q.remove.run(id),
    /** Unexpired sources of a user (a bound on how many one user can hold at once). */
    countLive: (userId: string, now: number) => q.countLive.get(userId, now) ?? 0,
  };
}

export type SourcesStore = ReturnType<typeof createSourcesStore>;
