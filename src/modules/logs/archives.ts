// Rotation of the per-app history into gzip archives (#21), and their retention. History is
// bounded by lines, bytes and age (config `logs`); past a bound the oldest lines move into one
// archive file under <state>/logs-archives/, down to 3/4 of the bound so rotation is not constant.
//
// Two ways to rotate. `rotate()` is one synchronous pass (explicit maintenance, after a state
// restore). `rotateInBackground()` is what runs while lines flow (a flood, the maintenance timer):
// it reads the oldest lines in slices, one slice a tick, gzips on the thread pool, writes the file
// asynchronously, then deletes the archived lines in slices too, so the event loop (live streams,
// collection) is never held for more than a slice. Which apps are over a bound comes from per-app
// counters kept as lines are stored and archived, not from a scan of the whole history.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createGzip, gzipSync, constants as zlibConstants } from 'node:zlib';
import { type Db } from '../../db/database.ts';
import { type Clock } from '../../shared/clock.ts';
import { objectId } from '../../shared/ids.ts';
import { type Logger } from '../../shared/logger.ts';
import { archiveDate, formatLine, type StoredLine } from './log-line.ts';
import { type ArchiveRow, type LogsStore } from './logs.store.ts';

/** Lines read, formatted and deleted per tick by a background rotation (~1 ms of work each). */
const SLICE = 1_000;
/** Archives are written once and read rarely: the fastest level costs a fifth of the default's CPU. */
const GZIP = { level: zlibConstants.Z_BEST_SPEED };
const tick = () => new Promise<void>((r) => setImmediate(r));

export interface ArchiveLimits {
  historyMaxLines: number;
  historyMaxBytes: number;
  historyMaxAgeMs: number;
  archivesMaxPerApp: number;
  archivesPerPage: number;
}

export function createArchiver(deps: {
  db: Db;
  store: LogsStore;
  dir: string;
  clock: Clock;
  logger: Logger;
  limits: ArchiveLimits;
}) {
  const { store, limits } = deps;
  mkdirSync(deps.dir, { recursive: true });
  /** Lines and characters stored per app; null until first needed (one scan), again after a sync pass. */
  let counts: Map<string, { lines: number; bytes: number }> | null = null;
  /** The background rotation under way, if any; a synchronous pass cancels it. */
  let job: { cancelled: boolean; done: Promise<ArchiveRow[]> } | null = null;
  /** Lines already in a committed archive but not yet deleted from the history (background deletes). */
  let pendingDelete: { appId: string; upTo: number } | null = null;

  const uncount = (appId: string, lines: number, bytes: number) => {
    const c = counts?.get(appId);
    if (c) [c.lines, c.bytes] = [Math.max(0, c.lines - lines), Math.max(0, c.bytes - bytes)];
  };
  /** The per-app counts, read from the store on first use (and after a reset). */
  const currentCounts = () => {
    counts ??= new Map(store.stats().map((st) => [st.app_id, { lines: st.lines, bytes: st.bytes }]));
    return counts;
  };
  const resync = () => {
    counts = null;
    return currentCounts();
  };

  /** How many of an app's oldest lines are past a bound (age apart). */
  function excessOf(lines: number, bytes: number): number {
    let excess = 0;
    if (lines > limits.historyMaxLines) excess = lines - Math.floor((limits.historyMaxLines * 3) / 4);
    if (bytes > limits.historyMaxBytes) {
      // Approximate lines for the byte bound from the mean line size.
      const keep = Math.floor((limits.historyMaxBytes * 3) / 4 / Math.max(1, bytes / lines));
      excess = Math.max(excess, lines - keep);
    }
    return excess;
  }

  const archiveRow = (appId: string, gz: Buffer, lines: number, fromMs: number, toMs: number) => {
    const id = objectId(deps.clock.now());
    return {
      id,
      app_id: appId,
      file: `${appId}-${id}.log.gz`,
      size: gz.length,
      lines,
      from_ms: fromMs,
      to_ms: toMs,
      created_at: deps.clock.now(),
    };
  };

  /** Archives the `count` oldest lines of an app into one gzip file. */
  function archiveOldest(appId: string, count: number): ArchiveRow | null {
    const lines = store.oldest(appId, count);
    if (!lines.length) return null;
    let text = '';
    let bytes = 0;
    for (const [, ts, container, line] of lines) {
      text += `${formatLine({ ts, container, text: line })}\n`;
      bytes += line.length;
    }
    const gz = gzipSync(text, GZIP);
    const row = archiveRow(appId, gz, lines.length, lines[0][4], lines[lines.length - 1][4]);
    writeFileSync(join(deps.dir, row.file), gz);
    try {
      const seq = deps.db.transaction(() => {
        const s = store.insertArchive(row);
        store.deleteUpTo(appId, lines[lines.length - 1][0]);
        return s;
      })();
      uncount(appId, lines.length, bytes);
      return { ...row, seq };
    } catch (err) {
      rmSync(join(deps.dir, row.file), { force: true });
      throw err;
    }
  }

  /**
   * archiveOldest spread over ticks. Nothing changes in the database until the file is written;
   * then the archive row and the first slice's deletion commit together, and the other slices are
   * deleted a tick each (a crash meanwhile leaves those lines in the history as well: repeated, never lost).
   */
  async function archiveOldestInSlices(
    appId: string,
    count: number,
    me: { cancelled: boolean },
  ): Promise<ArchiveRow | null> {
    const gz = createGzip(GZIP);
    try {
      return await archiveSlices(appId, count, me, gz);
    } finally {
      // Cancelled, failed or done: the compressor's native handle goes now, not at garbage collection.
      gz.destroy();
    }
  }

  async function archiveSlices(
    appId: string,
    count: number,
    me: { cancelled: boolean },
    gz: ReturnType<typeof createGzip>,
  ): Promise<ArchiveRow | null> {
    const chunks: Buffer[] = [];
    gz.on('data', (c: Buffer) => chunks.push(c));
    const gzipped = new Promise<void>((ok, fail) => gz.once('end', ok).once('error', fail));
    gzipped.catch(() => undefined); // awaited below; a failure before then must not go unhandled
    const stale = () => me.cancelled || !deps.db.open;
    const cuts: number[] = [];
    let taken = 0;
    let bytes = 0;
    let fromMs = 0;
    let toMs = 0;
    while (taken < count) {
      const rows = store.oldestAfter(appId, cuts.length ? cuts[cuts.length - 1] : 0, Math.min(SLICE, count - taken));
      if (!rows.length) break;
      let text = '';
      for (const [, ts, container, line] of rows) {
        text += `${formatLine({ ts, container, text: line })}\n`;
        bytes += line.length;
      }
      if (!taken) fromMs = rows[0][4];
      toMs = rows[rows.length - 1][4];
      cuts.push(rows[rows.length - 1][0]);
      taken += rows.length;
      gz.write(text);
      await tick();
      if (stale()) return null;
    }
    gz.end();
    if (!taken) return null;
    await gzipped;
    const data = Buffer.concat(chunks);
    const row = archiveRow(appId, data, taken, fromMs, toMs);
    const path = join(deps.dir, row.file);
    await writeFile(path, data);
    if (stale()) {
      await rm(path, { force: true });
      return null;
    }
    let seq: number;
    try {
      seq = deps.db.transaction(() => {
        const s = store.insertArchive(row);
        store.deleteUpTo(appId, cuts[0]);
        return s;
      })();
    } catch (err) {
      await rm(path, { force: true });
      throw err;
    }
    uncount(appId, taken, bytes);
    pendingDelete = { appId, upTo: cuts[cuts.length - 1] };
    for (const cut of cuts.slice(1)) {
      await tick();
      // A synchronous pass meanwhile finished the deletion (or the database closed).
      if (!pendingDelete || !deps.db.open) break;
      store.deleteUpTo(appId, cut);
    }
    pendingDelete = null;
    return { ...row, seq };
  }

  function removeArchive(a: ArchiveRow): void {
    rmSync(join(deps.dir, a.file), { force: true });
    store.deleteArchive(a.id);
  }

  /** Oldest archives past archivesMaxPerApp go. */
  function retain(appId: string): void {
    for (const old of store.archivesBeyond(appId, limits.archivesMaxPerApp)) removeArchive(old);
  }

  /** Stops a background rotation and completes what it committed, so a synchronous pass sees a settled history. */
  function settle(): void {
    if (job) job.cancelled = true;
    job = null;
    if (pendingDelete && deps.db.open) store.deleteUpTo(pendingDelete.appId, pendingDelete.upTo);
    pendingDelete = null;
  }

  return {
    dir: deps.dir,

    /** Counts lines as the pipeline stores them (a batch, in order). */
    noteStored(lines: StoredLine[]): void {
      if (!counts) return; // the first use scans the table, these lines included
      let appId = '';
      let c = { lines: 0, bytes: 0 };
      for (const l of lines) {
        if (l.app_id !== appId) {
          appId = l.app_id;
          const known = counts.get(appId);
          if (known) c = known;
          else {
            c = { lines: 0, bytes: 0 };
            counts.set(appId, c);
          }
        }
        c.lines++;
        c.bytes += l.text.length;
      }
    },

    /** Whether a background rotation is under way. */
    busy: () => job !== null,

    /** Ends a background rotation (what it committed is completed, the rest dropped); before the database closes. */
    async stop(): Promise<void> {
      const j = job;
      settle();
      await j?.done;
    },

    /**
     * Lines of deleted apps (apps the counters know: every app with lines) and their archives go.
     * For the maintenance timer: index lookups, not the full-table NOT IN of rotate({ sweep }). Safe
     * beside a background rotation: its deletions then find nothing, and an archive it makes for a
     * deleted app is an orphan the next sweep removes.
     */
    sweep(): void {
      const known = currentCounts();
      for (const appId of [...known.keys()]) {
        if (store.appExists(appId)) continue;
        store.deleteAppLines(appId);
        known.delete(appId);
      }
      for (const a of store.orphanArchives()) removeArchive(a);
    },

    /**
     * What rotate() does, spread over ticks (see archiveOldestInSlices). Resolves with the archives
     * made; a pass already under way is joined, not doubled. `age`: also rotate by age (the timer).
     */
    rotateInBackground(opts: { age?: boolean } = {}): Promise<ArchiveRow[]> {
      if (job) return job.done;
      if (!deps.db.open) return Promise.resolve([]);
      const cutoff = deps.clock.now() - limits.historyMaxAgeMs;
      const todo: [string, number][] = [];
      for (const [appId, c] of currentCounts()) {
        let excess = c.lines > 0 ? excessOf(c.lines, c.bytes) : 0;
        if (opts.age && c.lines > 0 && (store.firstTime(appId) ?? Infinity) < cutoff)
          excess = Math.max(excess, store.countOlderThan(appId, cutoff));
        if (excess > 0) todo.push([appId, excess]);
      }
      if (!todo.length) return Promise.resolve([]);
      // A slice's worth or less (the age bound's trickle, small bounds): archived at once, holding the loop no longer than a slice.
      if (todo.reduce((sum, [, excess]) => sum + excess, 0) <= SLICE) {
        const made: ArchiveRow[] = [];
        for (const [appId, excess] of todo) {
          try {
            const a = archiveOldest(appId, excess);
            if (a) made.push(a);
          } catch (err) {
            deps.logger.error({ err, app: appId }, 'logs: rotation into an archive failed');
          }
          retain(appId);
        }
        return Promise.resolve(made);
      }
      const me = { cancelled: false, done: Promise.resolve([] as ArchiveRow[]) };
      job = me;
      me.done = (async () => {
        const made: ArchiveRow[] = [];
        try {
          for (const [appId, excess] of todo) {
            try {
              const a = await archiveOldestInSlices(appId, excess, me);
              if (me.cancelled || !deps.db.open) break;
              if (a) made.push(a);
              retain(appId);
            } catch (err) {
              if (!me.cancelled && deps.db.open)
                deps.logger.error({ err, app: appId }, 'logs: rotation into an archive failed');
            }
          }
        } finally {
          if (job === me) job = null;
        }
        return made;
      })();
      return me.done;
    },

    /** One synchronous pass over every app: rotate what is past a bound, then apply retention. Returns archives made. */
    rotate(opts: { sweep?: boolean } = {}): ArchiveRow[] {
      settle();
      const made: ArchiveRow[] = [];
      if (opts.sweep !== false) {
        store.deleteOrphans();
        for (const a of store.orphanArchives()) removeArchive(a);
      }
      const now = deps.clock.now();
      for (const st of store.stats()) {
        let excess = excessOf(st.lines, st.bytes);
        if (st.oldest_ms < now - limits.historyMaxAgeMs)
          excess = Math.max(excess, store.countOlderThan(st.app_id, now - limits.historyMaxAgeMs));
        if (excess <= 0) continue;
        try {
          const a = archiveOldest(st.app_id, excess);
          if (a) made.push(a);
        } catch (err) {
          deps.logger.error({ err, app: st.app_id }, 'logs: rotation into an archive failed');
        }
        retain(st.app_id);
      }
      resync();
      return made;
    },

    /**
     * Newest first. `cursor` (what next_cursor gave) or `page` (the Go CLI's) select the slice; the
     * cursor wins when both come. next_cursor is the seq of the last archive returned.
     */
    list(
      appId: string,
      opts: { cursor?: string; page?: number },
    ): { archives: ArchiveRow[]; next_cursor: string; has_more: boolean } {
      const per = limits.archivesPerPage;
      let rows: ArchiveRow[];
      if (opts.cursor) rows = store.archivesBefore(appId, Number(opts.cursor), per + 1);
      else rows = store.archivesPage(appId, per + 1, ((opts.page ?? 1) - 1) * per);
      const has_more = rows.length > per;
      const archives = rows.slice(0, per);
      return { archives, has_more, next_cursor: has_more ? String(archives[archives.length - 1].seq) : '' };
    },

    find: (id: string) => store.archive(id),
    path: (a: ArchiveRow) => join(deps.dir, a.file),
    /** The platform's free-text bounds. */
    bounds: (a: ArchiveRow) => ({ from: archiveDate(a.from_ms), to: archiveDate(a.to_ms) }),
  };
}

export type Archiver = ReturnType<typeof createArchiver>;
