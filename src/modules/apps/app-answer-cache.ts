import { type Db } from '../../db/database.ts';
import { writeCount } from '../../db/write-count.ts';

/**
 * The serialised answer of `GET /v1/apps/:app`, per caller and app key, kept while nothing it may depend on
 * has changed. Invalidation is conservative so that it is complete: every entry is dropped as soon as the
 * database connection has made any call that may write (src/db/write-count.ts: every statement that is not
 * read-only, every exec and pragma, counted by the connection itself, triggers and transactions included), or
 * when the other input of the view, the emulator's URLs, is replaced. The emulator writes through one
 * connection, and everything the answer shows (the app row and its status, owner, parent, project,
 * collaborators for the access check) lives in that database. Checking costs a property read a request.
 */
export interface AppAnswerCache<T = string> {
  /**
   * The answer for (user, app key): cached, or `make(user, appKey)` (which may throw: nothing is cached then).
   * `make` is the caller's one function, not a closure made per request (each costs the build's naming of it).
   */
  answer<U extends { id: string }>(user: U, appKey: string, make: (user: U, appKey: string) => T): T;
}

export function createAppAnswerCache<T = string>(
  db: Db,
  context: () => unknown,
  maxEntries = 1_000,
): AppAnswerCache<T> {
  const writes = writeCount(db);
  // Per user id, then per app key: no key string made per request (the user's id is the same string each time).
  const entries = new Map<string, Map<string, T>>();
  let size = 0;
  let generation = -1;
  let contextSeen: unknown;
  return {
    answer(user, appKey, make) {
      const now = writes.value;
      const ctx = context();
      if (now !== generation || ctx !== contextSeen) {
        entries.clear();
        size = 0;
        generation = now;
        contextSeen = ctx;
      }
      const cached = entries.get(user.id)?.get(appKey);
      if (cached !== undefined) return cached;
      const made = make(user, appKey);
      // A view that wrote something (a default project made on first read) is not kept: the next read checks again.
      if (writes.value === generation) {
        if (size >= maxEntries) {
          entries.clear();
          size = 0;
        }
        let ofUser = entries.get(user.id);
        if (!ofUser) entries.set(user.id, (ofUser = new Map()));
        if (!ofUser.has(appKey)) size++;
        ofUser.set(appKey, made);
      }
      return made;
    },
  };
}
