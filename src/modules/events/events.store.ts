import { type Db } from '../../db/database.ts';

export interface EventRow {
  seq: number;
  id: string;
  type: string;
  app_id: string | null;
  app_name: string | null;
  user_id: string | null;
  created_at: number;
  type_data: string; // JSON object
}

/** The timeline. Maps app id / user id → events, newest first. */
export function createEventsStore(db: Db) {
  const s = {
    // Positional parameters: cheaper to bind than named ones read from an object (every action records an event).
    insert: db.prepare<[string, string, string | null, string | null, string | null, number, string]>(
      'INSERT INTO events (id, type, app_id, app_name, user_id, created_at, type_data) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    // Counts come from event_counts (migration 016, kept by triggers): no scan of the events.
    countApp: db.prepare<[string], number>("SELECT n FROM event_counts WHERE kind = 1 AND a = ? AND b = ''").pluck(),
    pageApp: db.prepare<[string, number, number], EventRow>(
      'SELECT * FROM events WHERE app_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?',
    ),
    // The user's timeline: what they did, and what happened on apps they own or collaborate on.
    // What the user did (kind 2), plus others' events on the apps they own (kind 4), plus every event of the apps
    // they collaborate on minus their own events there (counted in kind 2 already).
    countUser: db
      .prepare<{ user: string }, number>(
        `SELECT COALESCE((SELECT n FROM event_counts WHERE kind = 2 AND a = @user AND b = ''), 0)
            + COALESCE((SELECT n FROM event_counts WHERE kind = 4 AND a = @user AND b = ''), 0)
            + COALESCE((SELECT SUM(c.n - COALESCE(o.n, 0)) FROM (${COLLABORATED_APPS}) v
                          JOIN event_counts c ON c.kind = 1 AND c.a = v.id AND c.b = ''
                          LEFT JOIN event_counts o ON o.kind = 3 AND o.a = @user AND o.b = v.id), 0)`,
      )
      .pluck(),
    // Newest first by walking the table backwards (NOT INDEXED): the page stops after `limit` matches, instead of
    // collecting and sorting every matching event as the OR of two indexes made SQLite do. Visibility is looked up per
    // event (two primary-key/index probes), not by listing every app the user can see first.
    pageUser: db.prepare<{ user: string; limit: number; offset: number }, EventRow>(
      `SELECT * FROM events e NOT INDEXED WHERE e.user_id = @user
         OR EXISTS (SELECT 1 FROM apps WHERE id = e.app_id AND owner_id = @user)
         OR EXISTS (SELECT 1 FROM collaborators WHERE app_id = e.app_id AND user_id = @user AND status = 'accepted')
       ORDER BY e.seq DESC LIMIT @limit OFFSET @offset`,
    ),
  };
  return {
    insert: (e: Omit<EventRow, 'seq'>) =>
      void s.insert.run(e.id, e.type, e.app_id, e.app_name, e.user_id, e.created_at, e.type_data),
    countForApp: (appId: string) => s.countApp.get(appId) ?? 0,
    pageForApp: (appId: string, limit: number, offset: number) => s.pageApp.all(appId, limit, offset),
    countForUser: (userId: string) => s.countUser.get({ user: userId }) ?? 0,
    pageForUser: (userId: string, limit: number, offset: number) => s.pageUser.all({ user: userId, limit, offset }),
  };
}

/** Apps the user collaborates on without owning them (owned apps are counted through kind 4). */
const COLLABORATED_APPS =
  'SELECT DISTINCT co.app_id AS id FROM collaborators co JOIN apps ap ON ap.id = co.app_id WHERE co.user_id = @user ' +
  "AND co.status = 'accepted' AND ap.owner_id <> @user";

export type EventsStore = ReturnType<typeof createEventsStore>;
