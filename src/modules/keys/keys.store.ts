import { type Db } from '../../db/database.ts';

export interface KeyRow {
  id: string;
  user_id: string;
  name: string;
  content: string;
  fingerprint: string;
  fixed: number;
  created_at: number;
}

/** SSH public keys. Maps key id → owner and key; fingerprint → key (the SSH endpoint's look-up). */
export function createKeysStore(db: Db) {
  const s = {
    insert: db.prepare(
      'INSERT INTO ssh_keys (id, user_id, name, content, fingerprint, fixed, created_at) ' +
        'VALUES (@id, @user_id, @name, @content, @fingerprint, @fixed, @created_at)',
    ),
    ofUser: db.prepare<[string], KeyRow>('SELECT * FROM ssh_keys WHERE user_id = ? ORDER BY created_at, rowid'),
    countOfUser: db.prepare<[string], number>('SELECT COUNT(*) FROM ssh_keys WHERE user_id = ?').pluck(),
    byId: db.prepare<[string], KeyRow>('SELECT * FROM ssh_keys WHERE id = ?'),
    byFingerprint: db.prepare<[string], KeyRow>('SELECT * FROM ssh_keys WHERE fingerprint = ?'),
    byName: db.prepare<[string, string], KeyRow>('SELECT * FROM ssh_keys WHERE user_id = ? AND name = ?'),
    fixedOfUser: db.prepare<[string], KeyRow>('SELECT * FROM ssh_keys WHERE user_id = ? AND fixed = 1'),
    delete: db.prepare('DELETE FROM ssh_keys WHERE id = ?'),
  };
  return {
    insert: (row: KeyRow) => void s.insert.run(row),
    ofUser: (userId: string) => s.ofUser.all(userId),
    countOfUser: (userId: string) => s.countOfUser.get(userId) ?? 0,
    byId: (id: string) => s.byId.get(id),
    byFingerprint: (fingerprint: string) => s.byFingerprint.get(fingerprint),
    byName: (userId: string, name: string) => s.byName.get(userId, name),
    fixedOfUser: (userId: string) => s.fixedOfUser.all(userId),
    delete: (id: string) => s.delete.run(id).changes > 0,
  };
}

export type KeysStore = ReturnType<typeof createKeysStore>;
