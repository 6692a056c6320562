import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { createEventsStore } from '../../src/modules/events/events.store.ts';

// The counts kept by triggers (migration 016) must always equal a COUNT(*) over the events: checked
// against the plain query after inserts, deletes, events without an app or user, and collaborations.
describe('event counts', () => {
  const db = openDatabase({ inMemory: true });
  const store = createEventsStore(db);
  const user = (id: string) =>
    db
      .prepare("INSERT INTO users (id, username, email, password_hash, created_at) VALUES (?, ?, ?, 'x', 0)")
      .run(id, id, `${id}@example.test`);
  const app = (id: string, owner: string) =>
    db
      .prepare("INSERT INTO apps (id, name, owner_id, created_at, updated_at, stack_id) VALUES (?, ?, ?, 0, 0, 's')")
      .run(id, id, owner);
  let n = 0;
  const event = (appId: string | null, userId: string | null) =>
    store.insert({
      id: `ev-${n++}`,
      type: 'restart',
      app_id: appId,
      app_name: appId,
      user_id: userId,
      created_at: n,
      type_data: '{}',
    });
  const VISIBLE =
    "SELECT id FROM apps WHERE owner_id = @user UNION SELECT app_id FROM collaborators WHERE user_id = @user AND status = 'accepted'";
  const truth = (u: string) =>
    db
      .prepare(`SELECT COUNT(*) FROM events WHERE user_id = @user OR app_id IN (${VISIBLE})`)
      .pluck()
      .get({ user: u }) as number;
  const truthApp = (a: string) => db.prepare('SELECT COUNT(*) FROM events WHERE app_id = ?').pluck().get(a) as number;
  const check = () => {
    for (const u of ['u1', 'u2', 'u3']) expect(store.countForUser(u), u).toBe(truth(u));
    // A count that went negative would be a trigger missing a case.
    expect(db.prepare('SELECT COUNT(*) FROM event_counts WHERE n < 0').pluck().get()).toBe(0);
    for (const a of ['a1', 'a2', 'a3', 'gone', 'pair1', 'pair2', 'pair3'])
      expect(store.countForApp(a), a).toBe(truthApp(a));
  };

  it('equal COUNT(*) through inserts, collaborations and deletes', () => {
    for (const u of ['u1', 'u2', 'u3']) user(u);
    app('a1', 'u1');
    app('a2', 'u2');
    app('a3', 'u1');
    check();
    for (let i = 0; i < 50; i++) {
      event(['a1', 'a2', 'a3', 'gone', null][i % 5], ['u1', 'u2', 'u3', null][i % 4]);
    }
    check();
    // u3 becomes a collaborator of a1: its timeline now counts a1's events.
    db.prepare(
      "INSERT INTO collaborators (id, app_id, email, user_id, status, invitation_token, created_at) VALUES ('c1', 'a1', 'u3@example.test', 'u3', 'accepted', 't', 0)",
    ).run();
    check();
    // Transfers: a1 to u2, then a3 to u3 (a collaborator of nothing there) and back.
    db.prepare("UPDATE apps SET owner_id = 'u2' WHERE id = 'a1'").run();
    check();
    db.prepare("UPDATE apps SET owner_id = 'u3' WHERE id = 'a3'").run();
    check();
    for (let i = 0; i < 12; i++) event(['a1', 'a3', 'gone'][i % 3], ['u1', 'u2', 'u3'][i % 3]);
    check();
    db.prepare("UPDATE apps SET owner_id = 'u1' WHERE id = 'a3'").run();
    check();
    // An app deleted (its events stay, no longer visible to its owner), one created for events already written.
    db.prepare("DELETE FROM apps WHERE id = 'a2'").run();
    check();
    app('gone', 'u3');
    check();
    db.prepare("DELETE FROM events WHERE app_id = 'a1' OR user_id IS NULL").run();
    check();
    db.prepare('DELETE FROM events').run();
    check();
    expect(store.countForUser('u1')).toBe(0);
  });

  it("stay equal through pairs: an app created and deleted with its owner's events only, or with others' too", () => {
    const kind4 = (u: string) =>
      db.prepare("SELECT n FROM event_counts WHERE kind = 4 AND a = ? AND b = ''").pluck().get(u) as number | undefined;
    const before = kind4('u1') ?? 0;
    // What a create+delete pair writes (migration 024 skips the owner's count for both when nothing changes it).
    app('pair1', 'u1');
    event('pair1', 'u1');
    check();
    db.prepare("DELETE FROM apps WHERE id = 'pair1'").run();
    event('pair1', 'u1');
    check();
    expect(kind4('u1') ?? 0).toBe(before);
    // Someone else acted on it: the owner's count rises with it, and falls back once the app is deleted.
    app('pair2', 'u1');
    event('pair2', 'u1');
    event('pair2', 'u2');
    event('pair2', null);
    check();
    expect(kind4('u1')).toBe(before + 2);
    db.prepare("DELETE FROM apps WHERE id = 'pair2'").run();
    check();
    expect(kind4('u1')).toBe(before);
    // An app created for events already written under its id (a restore) takes them into its owner's count.
    event('pair3', 'u2');
    app('pair3', 'u1');
    check();
    expect(kind4('u1')).toBe(before + 1);
    db.prepare("DELETE FROM apps WHERE id = 'pair3'").run();
    check();
  });

  it('pages newest first, the same rows as the indexed query', () => {
    for (let i = 0; i < 30; i++) event(i % 2 ? 'a1' : 'a2', i % 3 ? 'u2' : 'u1');
    const plain = db.prepare(
      `SELECT * FROM events WHERE user_id = @user OR app_id IN (${VISIBLE}) ORDER BY seq DESC LIMIT @limit OFFSET @offset`,
    );
    for (const u of ['u1', 'u2', 'u3']) {
      expect(store.pageForUser(u, 7, 3)).toEqual(plain.all({ user: u, limit: 7, offset: 3 }));
    }
  });
});
