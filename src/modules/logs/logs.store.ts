import { type Db } from '../../db/database.ts';
import { type StoredLine } from './log-line.ts';

export interface CursorRow {
  engine_id: string;
  app_id: string;
  last_ts: string;
  last_texts: string; // JSON array
}

export interface ArchiveRow {
  seq: number;
  id: string;
  app_id: string;
  file: string;
  size: number;
  lines: number;
  from_ms: number;
  to_ms: number;
  created_at: number;
}

export interface AppLogStats {
  app_id: string;
  lines: number;
  bytes: number;
  oldest_ms: number;
}

// Lines go in by statements of INSERT_ROWS rows (fewer calls into SQLite: ~40 % less time a line).
const INSERT_ROWS = 64;
const COLUMNS = 6;

/** Log history, collection cursors and archives. Maps app id → lines (by seq), engine id → cursor, app id → archives. */
export function createLogsStore(db: Db) {
  const s = {
    insert: db.prepare(
      'INSERT INTO log_lines (app_id, ts, time_ms, container, stream, text) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    insertMany: db.prepare(
      `INSERT INTO log_lines (app_id, ts, time_ms, container, stream, text) VALUES ${Array(INSERT_ROWS).fill('(?, ?, ?, ?, ?, ?)').join(', ')}`,
    ),
    last: db.prepare<[string, number], StoredLine>(
      'SELECT * FROM (SELECT * FROM log_lines WHERE app_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq',
    ),
    containers: db.prepare<[string], string>('SELECT DISTINCT container FROM log_lines WHERE app_id = ?').pluck(),
    // Rows as arrays [seq, ts, container, text, time_ms]: rotation reads thousands at a time.
    oldest: db
      .prepare<[string, number], [number, string, string, string, number]>(
        'SELECT seq, ts, container, text, time_ms FROM log_lines WHERE app_id = ? ORDER BY seq LIMIT ?',
      )
      .raw(),
    oldestAfter: db
      .prepare<[string, number, number], [number, string, string, string, number]>(
        'SELECT seq, ts, container, text, time_ms FROM log_lines WHERE app_id = ? AND seq > ? ORDER BY seq LIMIT ?',
      )
      .raw(),
    // The first line by seq (an index seek): lines come in time order, so it is the oldest but for stragglers.
    firstTime: db
      .prepare<[string], number>('SELECT time_ms FROM log_lines WHERE app_id = ? ORDER BY seq LIMIT 1')
      .pluck(),
    appExists: db.prepare<[string], number>('SELECT 1 FROM apps WHERE id = ?').pluck(),
    deleteApp: db.prepare('DELETE FROM log_lines WHERE app_id = ?'),
    olderThan: db
      .prepare<[string, number], number>('SELECT COUNT(*) FROM log_lines WHERE app_id = ? AND time_ms < ?')
      .pluck(),
    deleteUpTo: db.prepare('DELETE FROM log_lines WHERE app_id = ? AND seq <= ?'),
    stats: db.prepare<[], AppLogStats>(
      'SELECT app_id, COUNT(*) AS lines, SUM(LENGTH(text)) AS bytes, MIN(time_ms) AS oldest_ms FROM log_lines GROUP BY app_id',
    ),
    orphans: db.prepare('DELETE FROM log_lines WHERE app_id NOT IN (SELECT id FROM apps)'),
    cursor: db.prepare<[string], CursorRow>('SELECT * FROM log_cursors WHERE engine_id = ?'),
    upsertCursor: db.prepare(
      'INSERT INTO log_cursors (engine_id, app_id, last_ts, last_texts) ' +
        'VALUES (@engine_id, @app_id, @last_ts, @last_texts) ON CONFLICT (engine_id) DO UPDATE ' +
        'SET last_ts = excluded.last_ts, last_texts = excluded.last_texts',
    ),
    deleteCursor: db.prepare('DELETE FROM log_cursors WHERE engine_id = ?'),
    insertArchive: db.prepare(
      'INSERT INTO log_archives (id, app_id, file, size, lines, from_ms, to_ms, created_at) ' +
        'VALUES (@id, @app_id, @file, @size, @lines, @from_ms, @to_ms, @created_at)',
    ),
    archive: db.prepare<[string], ArchiveRow>('SELECT * FROM log_archives WHERE id = ?'),
    // Newest first, like the platform's list; `before` is the cursor (a seq).
    archivesBefore: db.prepare<[string, number, number], ArchiveRow>(
      'SELECT * FROM log_archives WHERE app_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
    ),
    archivesPage: db.prepare<[string, number, number], ArchiveRow>(
      'SELECT * FROM log_archives WHERE app_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?',
    ),
    oldArchives: db.prepare<[string, number], ArchiveRow>(
      'SELECT * FROM log_archives WHERE app_id = ? ORDER BY seq DESC LIMIT -1 OFFSET ?',
    ),
    orphanArchives: db.prepare<[], ArchiveRow>('SELECT * FROM log_archives WHERE app_id NOT IN (SELECT id FROM apps)'),
    deleteArchive: db.prepare('DELETE FROM log_archives WHERE id = ?'),
  };

  const args: unknown[] = new Array(INSERT_ROWS * COLUMNS);

  return {
    /**
     * Inserts lines in order and writes each one's seq into it. Call inside a transaction: one
     * statement's rows get consecutive seqs (AUTOINCREMENT, a single writer), so the last rowid gives all.
     */
    insertAll(lines: StoredLine[]): void {
      let i = 0;
      for (; i + INSERT_ROWS <= lines.length; i += INSERT_ROWS) {
        for (let j = 0; j < INSERT_ROWS; j++) {
          const l = lines[i + j];
          const o = j * COLUMNS;
          args[o] = l.app_id;
          args[o + 1] = l.ts;
          args[o + 2] = l.time_ms;
          args[o + 3] = l.container;
          args[o + 4] = l.stream;
          args[o + 5] = l.text;
        }
        const last = Number(s.insertMany.run(args).lastInsertRowid);
        for (let j = 0; j < INSERT_ROWS; j++) lines[i + j].seq = last - (INSERT_ROWS - 1 - j);
      }
      for (; i < lines.length; i++) {
        const l = lines[i];
        l.seq = Number(s.insert.run(l.app_id, l.ts, l.time_ms, l.container, l.stream, l.text).lastInsertRowid);
      }
    },
    /** The last n lines of an app, oldest first; when `only` is given, of those containers only. */
    last(appId: string, n: number, only?: string[]): StoredLine[] {
      if (!only) return s.last.all(appId, n);
      if (!only.length) return [];
      const marks = only.map(() => '?').join(', ');
      return db
        .prepare<unknown[], StoredLine>(
          `SELECT * FROM (SELECT * FROM log_lines WHERE app_id = ? AND container IN (${marks}) ORDER BY seq DESC LIMIT ?) ORDER BY seq`,
        )
        .all(appId, ...only, n);
    },
    containers: (appId: string) => s.containers.all(appId),
    /** The oldest lines of an app as [seq, ts, container, text, time_ms] arrays. */
    oldest: (appId: string, limit: number) => s.oldest.all(appId, limit),
    /** The oldest lines of an app after `afterSeq`: rotation reads in slices, a tick each. */
    oldestAfter: (appId: string, afterSeq: number, limit: number) => s.oldestAfter.all(appId, afterSeq, limit),
    firstTime: (appId: string) => s.firstTime.get(appId),
    countOlderThan: (appId: string, ms: number) => s.olderThan.get(appId, ms) ?? 0,
    /** Whether the app still exists (its lines are orphans otherwise). */
    appExists: (appId: string) => s.appExists.get(appId) !== undefined,
    deleteAppLines: (appId: string) => s.deleteApp.run(appId).changes,
    deleteUpTo: (appId: string, seq: number) => void s.deleteUpTo.run(appId, seq),
    stats: () => s.stats.all(),
    deleteOrphans: () => s.orphans.run().changes,

    cursor: (engineId: string) => s.cursor.get(engineId),
    saveCursor: (row: CursorRow) => void s.upsertCursor.run(row),
    deleteCursor: (engineId: string) => void s.deleteCursor.run(engineId),

    insertArchive: (row: Omit<ArchiveRow, 'seq'>) => Number(s.insertArchive.run(row).lastInsertRowid),
    archive: (id: string) => s.archive.get(id),
    archivesBefore: (appId: string, beforeSeq: number, limit: number) => s.archivesBefore.all(appId, beforeSeq, limit),
    archivesPage: (appId: string, limit: number, offset: number) => s.archivesPage.all(appId, limit, offset),
    /** Archives of an app past the `keep` newest ones. */
    archivesBeyond: (appId: string, keep: number) => s.oldArchives.all(appId, keep),
    orphanArchives: () => s.orphanArchives.all(),
    deleteArchive: (id: string) => void s.deleteArchive.run(id),
  };
}

export type LogsStore = ReturnType<typeof createLogsStore>;
