import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { objectId } from '../../shared/ids.ts';
import { type Logger } from '../../shared/logger.ts';
import { type UserRow } from '../auth/principal.ts';
import { type EventsService } from '../events/events.service.ts';
import { type KeyRow, type KeysStore } from './keys.store.ts';
import { KeyError, parsePublicKey } from './ssh-public-key.ts';

/** Keys one account may hold (an emulator bound: the platform documents none). */
export const MAX_KEYS_PER_USER = 100;

export interface KeysServiceDeps {
  db: Db;
  store: KeysStore;
  events: EventsService;
  clock: Clock;
  logger: Logger;
  userById: (id: string) => UserRow | undefined;
  userByLogin: (login: string) => UserRow | undefined;
}

/**
 * The SSH public keys of each user (`/v1/keys`, go-scalingo keys.go): what the git endpoint
 * authenticates pushes with. A key belongs to one account (the fingerprint says who pushes).
 */
export function createKeysService(deps: KeysServiceDeps) {
  const { store, clock } = deps;

  function checkFree(userId: string, name: string, fingerprint: string): void {
    if (store.byName(userId, name)) throw ApiError.invalid('name', 'has already been taken');
    const owner = store.byFingerprint(fingerprint);
    if (owner)
      throw ApiError.invalid(
        'content',
        owner.user_id === userId
          ? `is already registered on this account (key "${owner.name}")`
          : 'is already used by another account: a key identifies one user',
      );
  }

  return {
    list: (user: UserRow): KeyRow[] => store.ofUser(user.id),

    get(user: UserRow, id: string): KeyRow {
      const row = store.byId(id);
      if (!row || row.user_id !== user.id) throw ApiError.notFound('key');
      return row;
    },

    async add(user: UserRow, input: { name: string; content: string }): Promise<KeyRow> {
      const name = input.name.trim();
      let key;
      try {
        key = await parsePublicKey(input.content);
      } catch (err) {
        if (err instanceof KeyError) throw ApiError.invalid('content', err.message);
        throw err;
      }
      // Checked after the parse (which may wait for ssh2 to load) and with the insert, in one go.
      checkFree(user.id, name, key.fingerprint);
      if (store.countOfUser(user.id) >= MAX_KEYS_PER_USER)
        throw ApiError.invalid('base', `an account holds at most ${MAX_KEYS_PER_USER} keys: remove one first`);
      const row: KeyRow = {
        id: objectId(clock.now()),
        user_id: user.id,
        name,
        content: key.content,
        fingerprint: key.fingerprint,
        fixed: 0,
        created_at: clock.now(),
      };
      tx(deps.db, () => {
        store.insert(row);
        deps.events.record({ type: 'new_key', user, typeData: { name, fingerprint: key.fingerprint } });
      });
      return row;
    },

    remove(user: UserRow, id: string): void {
      const row = this.get(user, id);
      tx(deps.db, () => {
        store.delete(row.id);
        deps.events.record({ type: 'delete_key', user, typeData: { name: row.name } });
      });
    },

    /**
     * The config's `users[].sshKeys`, registered at every start (ssh2 parses them, so this runs in
     * the start-up work, not before the API answers). Keys taken out of the config go; a key another
     * account holds is skipped with a warning.
     */
    async syncConfigured(users: { username: string; sshKeys: string[] }[]): Promise<void> {
      for (const u of users) {
        const user = deps.userByLogin(u.username);
        if (!user) continue;
        const wanted = new Set<string>();
        for (const [i, text] of u.sshKeys.entries()) {
          let key;
          try {
            key = await parsePublicKey(text);
          } catch (err) {
            deps.logger.warn(
              { user: u.username, index: i, error: (err as Error).message },
              'config: users[].sshKeys entry skipped',
            );
            continue;
          }
          wanted.add(key.fingerprint);
          const existing = store.byFingerprint(key.fingerprint);
          if (existing) {
            if (existing.user_id !== user.id)
              deps.logger.warn(
                { user: u.username, index: i },
                'config: users[].sshKeys entry skipped: another account holds this key',
              );
            continue;
          }
          let name = `config-key-${i + 1}`;
          if (store.byName(user.id, name)) name = `${name}-${key.fingerprint.slice(7, 15)}`;
          store.insert({
            id: objectId(clock.now()),
            user_id: user.id,
            name,
            content: key.content,
            fingerprint: key.fingerprint,
            fixed: 1,
            created_at: clock.now(),
          });
        }
        for (const row of store.fixedOfUser(user.id)) if (!wanted.has(row.fingerprint)) store.delete(row.id);
      }
    },

    /** The SSH endpoint's look-up: the registered key with this fingerprint, and its user. */
    byFingerprint(fingerprint: string): { key: KeyRow; user: UserRow } | undefined {
      const key = store.byFingerprint(fingerprint);
      const user = key && deps.userById(key.user_id);
      return key && user ? { key, user } : undefined;
    },

    /** The Key resource (go-scalingo `Key`; scalingo.js adds fingerprint, created_at, owner). */
    toJson(row: KeyRow) {
      const owner = deps.userById(row.user_id);
      return {
        id: row.id,
        name: row.name,
        content: row.content,
        fingerprint: row.fingerprint,
        created_at: isoDate(row.created_at),
        owner: owner ? { id: owner.id, username: owner.username, email: owner.email } : null,
      };
    },
  };
}

export type KeysService = ReturnType<typeof createKeysService>;
