import type { Db } from '../../db/database.ts';

/**
 * The serialised answer of `GET /v1/apps/:app`, per caller and app key, kept while nothing it may depend on
 * has changed. Invalidation is conservative so that it is complete: every entry is dropped as soon as the
 * database connection has changed any row of any table (SQLite's `total_changes()`, which counts every
 * INSERT, UPDATE and DELETE of the connection, including those of transactions and triggers), or when the
 * other input of the view, the emulator's URLs, is replaced. The emulator writes through one connection,
 * and everything the answer shows (the app row and its status, owner, parent, project, collaborators for
 * the access check) lives in that database. Reading `total_changes()` costs one prepared statement a request.
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
  const totalChanges = db.prepare<[], number>('SELECT total_changes()').pluck();
  const entries = new Map<string, T>();
  let generation = -1;
  let contextSeen: unknown;
  return {
    answer(user, appKey, make) {
      const now = totalChanges.get() ?? -1;
      const ctx = context();
      if (now !== generation || ctx !== contextSeen) {
        entries.clear();
        generation = now;
        contextSeen = ctx;
      }
      const key = `${user.id}\n${appKey}`;
      const cached = entries.get(key);
      if (cached !== undefined) return cached;
      const made = make(user, appKey);
      // A view that wrote something (a default project made on first read) is not kept: the next read checks again.
      if (totalChanges.get() === generation) {
        if (entries.size >= maxEntries) entries.clear();
        entries.set(key, made);
      }
      return made;
    },
  };
}
