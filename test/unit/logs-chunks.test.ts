import { describe, expect, it } from 'vitest';
import { Database, migrate, openDatabase } from '../../src/db/database.ts';
import { newLine, type StoredLine, timestampFromMs } from '../../src/modules/logs/log-line.ts';
import { createLogsStore } from '../../src/modules/logs/logs.store.ts';
import { STORED_LINES } from '../support/log-chunks.ts';

// The history stored in chunks (migration 026): reads across chunk boundaries, rotation's cuts inside a chunk, and the
// migration of the rows an older emulator stored one a line. What was written is read back by SQLite's JSON functions
// (STORED_LINES), not only through the store.

const T0 = Date.UTC(2026, 10, 28, 12);
const line = (i: number, app = 'a', container = i % 3 === 0 ? 'worker-1' : 'web-1', ms = T0 + i) =>
  newLine(app, timestampFromMs(ms), ms, container, (i % 2) as 0 | 1, `line ${i}`);

function storeWith(batches: StoredLine[][]) {
  const db = openDatabase({ inMemory: true });
  const store = createLogsStore(db);
  for (const b of batches) db.transaction(() => store.insertAll(b))();
  return { db, store };
}

const texts = (lines: { text: string }[]) => lines.map((l) => l.text);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `line ${from + i}`);

describe('log history in chunks', () => {
  it('a batch is a chunk a run of one app; seqs follow each other across chunks and apps', () => {
    const b1 = Array.from({ length: 10 }, (_, i) => line(i));
    const b2 = [line(10), line(11), line(0, 'b'), line(12), line(13)];
    const { db } = storeWith([b1, b2]);
    // Four chunks: b1, then a's two lines, b's line, a's two lines.
    expect(db.prepare('SELECT app_id, count FROM log_chunks ORDER BY last_seq').all()).toEqual([
      { app_id: 'a', count: 10 },
      { app_id: 'a', count: 2 },
      { app_id: 'b', count: 1 },
      { app_id: 'a', count: 2 },
    ]);
    const rows = db
      .prepare(`SELECT seq, app_id, text, container, stream, time_ms FROM (${STORED_LINES}) ORDER BY seq`)
      .all();
    const all = [...b1, ...b2];
    expect(rows).toEqual(
      all.map((l) => ({
        seq: l.seq,
        app_id: l.app_id,
        text: l.text,
        container: l.container,
        stream: l.stream,
        time_ms: l.time_ms,
      })),
    );
    expect(all.map((l) => l.seq)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
  });

  it('a run longer than a chunk is split at 1,000 lines', () => {
    const { db, store } = storeWith([Array.from({ length: 2_500 }, (_, i) => line(i))]);
    expect(db.prepare('SELECT count FROM log_chunks ORDER BY last_seq').pluck().all()).toEqual([1_000, 1_000, 500]);
    expect(texts(store.last('a', 2_500))).toEqual(range(0, 2_500));
  });

  it('the last n lines across chunk boundaries, with and without a container filter', () => {
    const batches = [0, 1, 2, 3].map((k) => Array.from({ length: 7 }, (_, i) => line(k * 7 + i)));
    const { store } = storeWith(batches);
    expect(texts(store.last('a', 10))).toEqual(range(18, 28));
    expect(texts(store.last('a', 100))).toEqual(range(0, 28));
    expect(store.last('a', 0)).toEqual([]);
    expect(store.last('nobody', 5)).toEqual([]);
    const workers = store.last('a', 4, (c) => c === 'worker-1');
    expect(texts(workers)).toEqual(['line 18', 'line 21', 'line 24', 'line 27']);
    expect(workers.map((l) => l.seq)).toEqual([19, 22, 25, 28]);
    expect(store.last('a', 5, () => false)).toEqual([]);
    const [first] = store.last('a', 28);
    expect(first).toEqual({ ...line(0), seq: 1 });
  });

  it('rotation reads from inside a chunk and deletes up to a seq inside one: the rest of that chunk stays', () => {
    const batches = [0, 1, 2].map((k) => Array.from({ length: 10 }, (_, i) => line(k * 10 + i)));
    const { db, store } = storeWith(batches);
    expect(store.oldest('a', 3).map((r) => r[0])).toEqual([1, 2, 3]);
    const slice = store.oldestAfter('a', 8, 5);
    expect(slice).toEqual(
      [9, 10, 11, 12, 13].map((seq) => [
        seq,
        line(seq - 1).ts,
        line(seq - 1).container,
        `line ${seq - 1}`,
        T0 + seq - 1,
      ]),
    );
    store.deleteUpTo('a', 13); // inside the second chunk
    expect(db.prepare('SELECT last_seq, count, first_ms FROM log_chunks ORDER BY last_seq').all()).toEqual([
      { last_seq: 20, count: 7, first_ms: T0 + 13 },
      { last_seq: 30, count: 10, first_ms: T0 + 20 },
    ]);
    expect(texts(store.last('a', 100))).toEqual(range(13, 30));
    expect(store.last('a', 100)[0].seq).toBe(14);
    expect(store.oldest('a', 1)[0][0]).toBe(14);
    expect(store.firstTime('a')).toBe(T0 + 13);
    expect(store.stats()).toEqual([{ app_id: 'a', lines: 17, bytes: 17 * 7, oldest_ms: T0 + 13 }]);
    store.deleteUpTo('a', 20); // a chunk's last line: the whole chunk goes
    expect(db.prepare('SELECT count FROM log_chunks').pluck().all()).toEqual([10]);
    // New lines after rotation take new seqs.
    const more = [line(30)];
    db.transaction(() => store.insertAll(more))();
    expect(more[0].seq).toBe(31);
  });

  it('counts the lines older than a time: whole chunks by their newest line, a chunk across the time line by line', () => {
    // A straggler (older than its neighbours) inside the third chunk.
    const batches = [
      Array.from({ length: 5 }, (_, i) => line(i)),
      Array.from({ length: 5 }, (_, i) => line(5 + i)),
      [line(10), line(11, 'a', 'web-1', T0 + 2), line(12)],
    ];
    const { store } = storeWith(batches);
    expect(store.countOlderThan('a', T0)).toBe(0);
    expect(store.countOlderThan('a', T0 + 3)).toBe(4); // 0, 1, 2 and the straggler
    expect(store.countOlderThan('a', T0 + 7)).toBe(8);
    expect(store.countOlderThan('a', T0 + 100)).toBe(13);
  });

  it('deleted apps: their chunks go, the other apps keep theirs', () => {
    const { store } = storeWith([[line(0), line(1), line(0, 'b')]]);
    store.deleteAppLines('a');
    expect(texts(store.last('b', 5))).toEqual(['line 0']);
    expect(store.last('a', 5)).toEqual([]);
    // No app exists in this database: every chunk is an orphan.
    store.deleteOrphans();
    expect(store.stats()).toEqual([]);
  });
});

describe('migration 026: lines stored one a row', () => {
  it('become chunks with their seq, text, time and container; seqs given before are not given again', () => {
    const db = new Database(':memory:');
    migrate(db, undefined, 25);
    const insert = db.prepare(
      'INSERT INTO log_lines (app_id, ts, time_ms, container, stream, text) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const old = [line(0), line(1, 'b'), line(2), line(3, 'a', 'router'), line(4), line(5)];
    for (const l of old) insert.run(l.app_id, l.ts, l.time_ms, l.container, l.stream, l.text);
    // The newest two were rotated away: their seqs (5, 6) were given and must stay given.
    db.prepare('DELETE FROM log_lines WHERE seq > 4').run();
    migrate(db);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'log_lines'").all()).toEqual([]);
    const store = createLogsStore(db);
    const a = store.last('a', 10);
    expect(a).toEqual([0, 2, 3].map((i) => ({ ...old[i], seq: i + 1 })));
    expect(texts(store.last('b', 10))).toEqual(['line 1']);
    expect(store.stats()).toEqual([
      { app_id: 'a', lines: 3, bytes: 18, oldest_ms: T0 },
      { app_id: 'b', lines: 1, bytes: 6, oldest_ms: T0 + 1 },
    ]);
    const next = [line(6), line(7)];
    db.transaction(() => store.insertAll(next))();
    expect(next.map((l) => l.seq)).toEqual([7, 8]);
    store.deleteUpTo('a', 3);
    expect(texts(store.last('a', 10))).toEqual(['line 3', 'line 6', 'line 7']);
  });

  it('an empty history gives an empty table whose seqs start at 1, or where log_lines had stopped', () => {
    const empty = new Database(':memory:');
    migrate(empty);
    const fresh = [line(0)];
    const s1 = createLogsStore(empty);
    empty.transaction(() => s1.insertAll(fresh))();
    expect(fresh[0].seq).toBe(1);

    const emptied = new Database(':memory:');
    migrate(emptied, undefined, 25);
    emptied
      .prepare('INSERT INTO log_lines (app_id, ts, time_ms, container, stream, text) VALUES (?, ?, ?, ?, ?, ?)')
      .run('a', line(0).ts, T0, 'web-1', 0, 'x');
    emptied.exec('DELETE FROM log_lines');
    migrate(emptied);
    const after = [line(1)];
    const s2 = createLogsStore(emptied);
    emptied.transaction(() => s2.insertAll(after))();
    expect(after[0].seq).toBe(2);
  });
});
