import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';
import { countWrites } from '../../src/db/write-count.ts';
import { createAppAnswerCache } from '../../src/modules/apps/app-answer-cache.ts';

describe('app answer cache: dropped by any change of the database or of the URLs', () => {
  let db: Database.Database;
  let urls: object;
  let made: number;
  let insertB: Database.Statement;
  const make = (v: string) => () => (made++, v);
  const user = (id: string) => ({ id });
  beforeEach(() => {
    db = countWrites(new Database(':memory:'));
    db.exec('CREATE TABLE a (x INTEGER); CREATE TABLE b (y INTEGER)');
    insertB = db.prepare('INSERT INTO b VALUES (2)');
    urls = { api: 'http://127.0.0.1:1' };
    made = 0;
  });

  it('answers from the cache while nothing changed, per user and per key', () => {
    const cache = createAppAnswerCache(db, () => urls);
    expect(cache.answer(user('u1'), 'app', make('one'))).toBe('one');
    expect(cache.answer(user('u1'), 'app', make('two'))).toBe('one');
    expect(made).toBe(1);
    expect(cache.answer(user('u2'), 'app', make('other user'))).toBe('other user');
    expect(cache.answer(user('u1'), 'app-2', make('other key'))).toBe('other key');
    expect(made).toBe(3);
  });

  it('hands make the user and the app key it was asked for', () => {
    const cache = createAppAnswerCache(db, () => urls);
    expect(cache.answer(user('u7'), 'my-app', (u, key) => `${u.id}/${key}`)).toBe('u7/my-app');
  });

  it.each([
    ['an insert in any table', () => db.prepare('INSERT INTO b VALUES (1)').run()],
    ['db.exec', () => db.exec('INSERT INTO a VALUES (2)')],
    ['an update in a transaction', () => db.transaction(() => db.prepare('UPDATE a SET x = 3').run())()],
    ['a delete without WHERE', () => db.prepare('DELETE FROM a').run()],
    ['an INSERT … RETURNING read with get()', () => db.prepare('INSERT INTO a VALUES (4) RETURNING x').get()],
    ['an UPDATE … RETURNING read with all()', () => db.prepare('UPDATE a SET x = 5 RETURNING x').all()],
    ['a pragma', () => db.pragma('user_version = 7')],
    ['a statement prepared before the answer was cached', () => insertB.run()],
    ['a write that failed', () => expect(() => db.prepare('INSERT INTO c VALUES (1)').run()).toThrow()],
  ])('%s drops every entry', (_what, write) => {
    db.exec('INSERT INTO a VALUES (1)');
    db.exec('CREATE TABLE c (z INTEGER CHECK (z > 1))');
    const cache = createAppAnswerCache(db, () => urls);
    cache.answer(user('u1'), 'app', make('before'));
    write();
    expect(cache.answer(user('u1'), 'app', make('after'))).toBe('after');
  });

  it('reads keep the answers', () => {
    db.exec('INSERT INTO a VALUES (1)');
    const cache = createAppAnswerCache(db, () => urls);
    cache.answer(user('u1'), 'app', make('before'));
    db.prepare('SELECT * FROM a').all();
    db.prepare('SELECT x FROM a').pluck().get();
    expect(cache.answer(user('u1'), 'app', make('after'))).toBe('before');
    expect(made).toBe(1);
  });

  it('refuses a connection that does not count its writes', () => {
    expect(() => createAppAnswerCache(new Database(':memory:'), () => urls)).toThrow(/does not count its writes/);
  });

  it('a new URLs object drops every entry', () => {
    const cache = createAppAnswerCache(db, () => urls);
    cache.answer(user('u1'), 'app', make('before'));
    urls = { api: 'http://127.0.0.1:2' };
    expect(cache.answer(user('u1'), 'app', make('after'))).toBe('after');
  });

  it('keeps nothing when making the answer throws (a 404) or writes', () => {
    const cache = createAppAnswerCache(db, () => urls);
    expect(() =>
      cache.answer(user('u1'), 'gone', () => {
        throw new Error('not found');
      }),
    ).toThrow('not found');
    expect(cache.answer(user('u1'), 'gone', make('now there'))).toBe('now there');
    const writing = () => (db.prepare('INSERT INTO a VALUES (9)').run(), made++, `v${made}`);
    expect(cache.answer(user('u1'), 'w', writing)).toBe('v2');
    expect(cache.answer(user('u1'), 'w', writing)).toBe('v3');
  });

  it('holds at most maxEntries answers', () => {
    const cache = createAppAnswerCache(db, () => urls, 2);
    cache.answer(user('u'), 'a', make('a'));
    cache.answer(user('u'), 'b', make('b'));
    cache.answer(user('u'), 'c', make('c')); // full: emptied, then c
    expect(made).toBe(3);
    expect(cache.answer(user('u'), 'c', make('c2'))).toBe('c');
    expect(cache.answer(user('u'), 'a', make('a2'))).toBe('a2');
  });
});
