import { type Db } from '../../db/database.ts';
import { type UserRow } from './principal.ts';

export interface UserRecord extends UserRow {
  password_hash: string;
}

export interface TokenRow {
  id: string;
  user_id: string;
  name: string;
  token_hash: string;
  created_at: number;
  issued_at: number;
  last_used_at: number | null;
  fixed: number;
}

/** Users and API tokens. Maps username/email → user, token hash → token row. */
export function createAuthStore(db: Db) {
  const s = {
    userById: db.prepare<[string], UserRecord>('SELECT * FROM users WHERE id = ?'),
    userByLogin: db.prepare<[string, string], UserRecord>('SELECT * FROM users WHERE username = ? OR email = ?'),
    userByEmail: db.prepare<[string], UserRecord>('SELECT * FROM users WHERE email = ?'),
    insertUser: db.prepare(
      'INSERT INTO users (id, username, email, fullname, password_hash, payment_method, created_at) ' +
        'VALUES (@id, @username, @email, @fullname, @password_hash, @payment_method, @created_at)',
    ),
    updateUser: db.prepare(
      'UPDATE users SET email = @email, fullname = @fullname, password_hash = @password_hash, payment_method = @payment_method WHERE id = @id',
    ),
    setPasswordHash: db.prepare('UPDATE users SET password_hash = ? WHERE id = ?'),
    tokenById: db.prepare<[string], TokenRow>('SELECT * FROM api_tokens WHERE id = ?'),
    tokenByHash: db.prepare<[string], TokenRow>('SELECT * FROM api_tokens WHERE token_hash = ?'),
    tokensOfUser: db.prepare<[string], TokenRow>('SELECT * FROM api_tokens WHERE user_id = ? ORDER BY created_at, id'),
    insertToken: db.prepare(
      'INSERT INTO api_tokens (id, user_id, name, token_hash, created_at, issued_at, last_used_at, fixed) ' +
        'VALUES (@id, @user_id, @name, @token_hash, @created_at, @issued_at, @last_used_at, @fixed)',
    ),
    renewToken: db.prepare('UPDATE api_tokens SET token_hash = ?, issued_at = ? WHERE id = ?'),
    deleteToken: db.prepare('DELETE FROM api_tokens WHERE id = ?'),
    deleteTokensByName: db.prepare('DELETE FROM api_tokens WHERE user_id = ? AND name = ?'),
    deleteFixedTokensExcept: db.prepare<[string, string]>(
      'DELETE FROM api_tokens WHERE user_id = ? AND fixed = 1 AND token_hash NOT IN (SELECT value FROM json_each(?))',
    ),
    touchToken: db.prepare('UPDATE api_tokens SET last_used_at = ? WHERE id = ?'),
  };
  return {
    userById: (id: string) => s.userById.get(id),
    userByLogin: (login: string) => s.userByLogin.get(login, login),
    userByEmail: (email: string) => s.userByEmail.get(email),
    insertUser: (u: UserRecord) => void s.insertUser.run(u),
    updateUser: (u: Pick<UserRecord, 'id' | 'email' | 'fullname' | 'password_hash' | 'payment_method'>) =>
      void s.updateUser.run(u),
    setPasswordHash: (id: string, hash: string) => void s.setPasswordHash.run(hash, id),
    tokenById: (id: string) => s.tokenById.get(id),
    tokenByHash: (hash: string) => s.tokenByHash.get(hash),
    tokensOfUser: (userId: string) => s.tokensOfUser.all(userId),
    insertToken: (t: TokenRow) => void s.insertToken.run(t),
    renewToken: (id: string, hash: string, issuedAt: number) => void s.renewToken.run(hash, issuedAt, id),
    deleteToken: (id: string) => s.deleteToken.run(id).changes > 0,
    deleteTokensByName: (userId: string, name: string) => void s.deleteTokensByName.run(userId, name),
    /** Drops config-declared tokens that the config no longer declares. */
    pruneFixedTokens: (userId: string, keepHashes: string[]) =>
      void s.deleteFixedTokensExcept.run(userId, JSON.stringify(keepHashes)),
    touchToken: (id: string, at: number) => void s.touchToken.run(at, id),
  };
}

export type AuthStore = ReturnType<typeof createAuthStore>;
