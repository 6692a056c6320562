import { type Db } from '../../db/database.ts';

export interface DomainRow {
  id: string;
  app_id: string;
  name: string;
  canonical: number;
  letsencrypt_enabled: number;
  tlscert: string | null;
  tlskey: string | null;
  cert_subject: string | null;
  cert_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

/** Custom domains. Maps hostname → its app (unique across the emulator); (app) → its domains. */
export function createDomainsStore(db: Db) {
  const s = {
    ofApp: db.prepare<[string], DomainRow>('SELECT * FROM domains WHERE app_id = ? ORDER BY created_at, name'),
    one: db.prepare<[string, string], DomainRow>('SELECT * FROM domains WHERE app_id = ? AND id = ?'),
    byName: db.prepare<[string], DomainRow>('SELECT * FROM domains WHERE name = ?'),
    canonicalOf: db.prepare<[string], DomainRow>('SELECT * FROM domains WHERE app_id = ? AND canonical = 1'),
    insert: db.prepare(
      'INSERT INTO domains (id, app_id, name, canonical, letsencrypt_enabled, tlscert, tlskey, cert_subject, ' +
        'cert_expires_at, created_at, updated_at) ' +
        'VALUES (@id, @app_id, @name, @canonical, @letsencrypt_enabled, @tlscert, @tlskey, @cert_subject, ' +
        '@cert_expires_at, @created_at, @updated_at)',
    ),
    update: db.prepare(
      'UPDATE domains SET canonical = @canonical, letsencrypt_enabled = @letsencrypt_enabled, tlscert = @tlscert, ' +
        'tlskey = @tlskey, cert_subject = @cert_subject, cert_expires_at = @cert_expires_at, updated_at = @updated_at ' +
        'WHERE id = @id',
    ),
    clearCanonical: db.prepare('UPDATE domains SET canonical = 0 WHERE app_id = ? AND canonical = 1'),
    delete: db.prepare('DELETE FROM domains WHERE id = ?'),
  };
  return {
    ofApp: (appId: string) => s.ofApp.all(appId),
    find: (appId: string, id: string) => s.one.get(appId, id),
    byName: (name: string) => s.byName.get(name),
    canonicalOf: (appId: string) => s.canonicalOf.get(appId),
    insert: (row: DomainRow) => void s.insert.run(row),
    update: (row: DomainRow) => void s.update.run(row),
    clearCanonical: (appId: string) => void s.clearCanonical.run(appId),
    delete: (id: string) => void s.delete.run(id),
  };
}

export type DomainsStore = ReturnType<typeof createDomainsStore>;
