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

/** Lines in one chunk at most: a rotation that cuts inside a chunk rewrites it, so a chunk stays small. */
const CHUNK_MAX_LINES = 1_000;

/** A stored line in its chunk: [ts, time_ms, container, stream, text] (migration 026). */
type PackedLine = [ts: string, timeMs: number, container: string, stream: number, text: string];

interface ChunkRow {
  last_seq: number;
  count: number;
  lines: string;
}

/** The oldest lines as rotation reads them: [seq, ts, container, text, time_ms]. */
export type OldLine = [seq: number, ts: string, container: string, text: string, timeMs: number];

const unpack = (c: ChunkRow) => JSON.parse(c.lines) as PackedLine[];

/**
 * Log history, collection cursors and archives. Maps app id → lines (by seq), engine id → cursor, app id → archives.
 * Lines are stored in chunks (a run of one app's lines, migration 026): reads unpack the chunks they reach.
 */
export function createLogsStore(db: Db) {
  const s = {
    // The last seq given (sqlite_sequence outlives deleted chunks): a chunk's lines take the next `count` seqs.
    lastSeq: db.prepare<[], number>("SELECT seq FROM sqlite_sequence WHERE name = 'log_chunks'").pluck(),
    insertChunk: db.prepare(
      'INSERT INTO log_chunks (last_seq, app_id, count, bytes, first_ms, min_ms, max_ms, lines) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    rewriteChunk: db.prepare(
      'UPDATE log_chunks SET count = ?, bytes = ?, first_ms = ?, min_ms = ?, max_ms = ?, lines = ? WHERE last_seq = ?',
    ),
    newest: db.prepare<[string], ChunkRow>(
      'SELECT last_seq, count, lines FROM log_chunks WHERE app_id = ? ORDER BY last_seq DESC',
    ),
    // The chunks holding lines after a seq, oldest first (rotation's slices start inside the first).
    after: db.prepare<[string, number], ChunkRow>(
      'SELECT last_seq, count, lines FROM log_chunks WHERE app_id = ? AND last_seq > ? ORDER BY last_seq',
    ),
    // The first line's time (an index seek): lines come in time order, so it is the oldest but for stragglers.
    firstTime: db
      .prepare<[string], number>('SELECT first_ms FROM log_chunks WHERE app_id = ? ORDER BY last_seq LIMIT 1')
      .pluck(),
    appExists: db.prepare<[string], number>('SELECT 1 FROM apps WHERE id = ?').pluck(),
    deleteApp: db.prepare('DELETE FROM log_chunks WHERE app_id = ?'),
    wholeOlderThan: db
      .prepare<[string, number], number>(
        'SELECT COALESCE(SUM(count), 0) FROM log_chunks WHERE app_id = ? AND max_ms < ?',
      )
      .pluck(),
    straddling: db.prepare<[string, number, number], ChunkRow>(
      'SELECT last_seq, count, lines FROM log_chunks WHERE app_id = ? AND min_ms < ? AND max_ms >= ?',
    ),
    deleteUpTo: db.prepare('DELETE FROM log_chunks WHERE app_id = ? AND last_seq <= ?'),
    stats: db.prepare<[], AppLogStats>(
      'SELECT app_id, SUM(count) AS lines, SUM(bytes) AS bytes, MIN(min_ms) AS oldest_ms FROM log_chunks GROUP BY app_id',
    ),
    orphans: db.prepare('DELETE FROM log_chunks WHERE app_id NOT IN (SELECT id FROM apps)'),
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

  /** Writes packed lines as the chunk ending at `lastSeq` (a new one, or the rest of one rotation cut into). */
  function writeChunk(appId: string, lastSeq: number, rows: PackedLine[], rewrite: boolean): void {
    let bytes = 0;
    let min = rows[0][1];
    let max = min;
    for (const r of rows) {
      bytes += r[4].length;
      if (r[1] < min) min = r[1];
      else if (r[1] > max) max = r[1];
    }
    const packed = JSON.stringify(rows);
    if (rewrite) s.rewriteChunk.run(rows.length, bytes, rows[0][1], min, max, packed, lastSeq);
    else s.insertChunk.run(lastSeq, appId, rows.length, bytes, rows[0][1], min, max, packed);
  }

  /** lines[from…to) (one app's) as chunks of CHUNK_MAX_LINES at most; writes each line's seq into it. */
  function insertRun(lines: StoredLine[], from: number, to: number): void {
    const appId = lines[from].app_id;
    for (let start = from; start < to; start += CHUNK_MAX_LINES) {
      const end = Math.min(to, start + CHUNK_MAX_LINES);
      const rows: PackedLine[] = new Array(end - start);
      const first = (s.lastSeq.get() ?? 0) + 1;
      for (let i = start; i < end; i++) {
        const l = lines[i];
        rows[i - start] = [l.ts, l.time_ms, l.container, l.stream, l.text];
        l.seq = first + (i - start);
      }
      writeChunk(appId, first + rows.length - 1, rows, false);
    }
  }

  /** Lines of an app with seq > afterSeq, oldest first, as `take(seq, packed)` says; stops when it returns false. */
  function eachAfter(appId: string, afterSeq: number, take: (seq: number, r: PackedLine) => boolean): void {
    for (const c of s.after.iterate(appId, afterSeq)) {
      const rows = unpack(c);
      const first = c.last_seq - rows.length + 1;
      for (let i = Math.max(0, afterSeq - first + 1); i < rows.length; i++) if (!take(first + i, rows[i])) return;
    }
  }

  function oldestAfter(appId: string, afterSeq: number, limit: number): OldLine[] {
    const out: OldLine[] = [];
    if (limit > 0)
      eachAfter(appId, afterSeq, (seq, r) => {
        out.push([seq, r[0], r[2], r[4], r[1]]);
        return out.length < limit;
      });
    return out;
  }

  return {
    /**
     * Stores lines in order and writes each one's seq into it: a run of one app's lines is a chunk. Call inside a
     * transaction (the chunks and the seq counter commit together).
     */
    insertAll(lines: StoredLine[]): void {
      let i = 0;
      while (i < lines.length) {
        let j = i + 1;
        while (j < lines.length && lines[j].app_id === lines[i].app_id) j++;
        insertRun(lines, i, j);
        i = j;
      }
    },
    /** The last n lines of an app, oldest first; when `match` is given, of the containers it matches only. */
    last(appId: string, n: number, match?: (container: string) => boolean): StoredLine[] {
      const out: StoredLine[] = [];
      if (n <= 0) return out;
      for (const c of s.newest.iterate(appId)) {
        const rows = unpack(c);
        const first = c.last_seq - rows.length + 1;
        for (let i = rows.length - 1; i >= 0 && out.length < n; i--) {
          const [ts, time_ms, container, stream, text] = rows[i];
          if (match && !match(container)) continue;
          out.push({ seq: first + i, app_id: appId, ts, time_ms, container, stream, text, formatted: undefined });
        }
        if (out.length >= n) break;
      }
      return out.reverse();
    },
    /** The oldest lines of an app as [seq, ts, container, text, time_ms] arrays. */
    oldest: (appId: string, limit: number) => oldestAfter(appId, 0, limit),
    /** The oldest lines of an app after `afterSeq`: rotation reads in slices, a tick each. */
    oldestAfter: (appId: string, afterSeq: number, limit: number) => oldestAfter(appId, afterSeq, limit),
    firstTime: (appId: string) => s.firstTime.get(appId),
    /** Lines of an app older than `ms`: whole chunks counted by their newest line, the chunks across `ms` unpacked. */
    countOlderThan(appId: string, ms: number): number {
      let n = s.wholeOlderThan.get(appId, ms) ?? 0;
      for (const c of s.straddling.iterate(appId, ms, ms)) for (const r of unpack(c)) if (r[1] < ms) n++;
      return n;
    },
    /** Whether the app still exists (its lines are orphans otherwise). */
    appExists: (appId: string) => s.appExists.get(appId) !== undefined,
    deleteAppLines: (appId: string) => void s.deleteApp.run(appId),
    /** Deletes an app's lines up to seq (included): whole chunks, then the rest of the chunk the cut falls in. */
    deleteUpTo(appId: string, seq: number): void {
      s.deleteUpTo.run(appId, seq);
      const c = s.after.get(appId, seq);
      if (!c || c.last_seq - c.count >= seq) return;
      const rows = unpack(c);
      writeChunk(appId, c.last_seq, rows.slice(seq - (c.last_seq - rows.length)), true);
    },
    stats: () => s.stats.all(),
    deleteOrphans: () => void s.orphans.run(),

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
