// Rotation of the per-app history into gzip archives (#21), and their retention. History is
// bounded by lines, bytes and age (config `logs`); past a bound the oldest lines move into one
// archive file under <state>/logs-archives/, down to 3/4 of the bound so rotation is not constant.
import { gzipSync } from 'node:zlib';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/logger.ts';
import { objectId } from '../../shared/ids.ts';
import type { ArchiveRow, LogsStore } from './logs.store.ts';
import { archiveDate, formatLine } from './log-line.ts';

export interface ArchiveLimits {
  historyMaxLines: number;
  historyMaxBytes: number;
  historyMaxAgeMs: number;
  archivesMaxPerApp: number;
  archivesPerPage: number;
}

export function createArchiver(deps: { db: Db; store: LogsStore; dir: string; clock: Clock; logger: Logger; limits: ArchiveLimits }) {
  const { store, limits } = deps;
  mkdirSync(deps.dir, { recursive: true });

  /** Archives the `count` oldest lines of an app into one gzip file. */
  function archiveOldest(appId: string, count: number): ArchiveRow | null {
    const lines = store.oldest(appId, count);
    if (!lines.length) return null;
    const id = objectId(deps.clock.now());
    const file = `${appId}-${id}.log.gz`;
    let text = '';
    for (const [, ts, container, line] of lines) text += `${formatLine({ ts, container, text: line })}\n`;
    const gz = gzipSync(text);
    writeFileSync(join(deps.dir, file), gz);
    const row = {
      id,
      app_id: appId,
      file,
      size: gz.length,
      lines: lines.length,
      from_ms: lines[0][4],
      to_ms: lines[lines.length - 1][4],
      created_at: deps.clock.now(),
    };
    try {
      const seq = deps.db.transaction(() => {
        const s = store.insertArchive(row);
        store.deleteUpTo(appId, lines[lines.length - 1][0]);
        return s;
      })();
      return { ...row, seq };
    } catch (err) {
      rmSync(join(deps.dir, file), { force: true });
      throw err;
    }
  }

  function removeArchive(a: ArchiveRow): void {
    rmSync(join(deps.dir, a.file), { force: true });
    store.deleteArchive(a.id);
  }

  return {
    dir: deps.dir,

    /** One pass over every app: rotate what is past a bound, then apply retention. Returns archives made. */
    rotate(opts: { sweep?: boolean } = {}): ArchiveRow[] {
      const made: ArchiveRow[] = [];
      if (opts.sweep !== false) {
        store.deleteOrphans();
        for (const a of store.orphanArchives()) removeArchive(a);
      }
      const now = deps.clock.now();
      for (const st of store.stats()) {
        let excess = 0;
        if (st.lines > limits.historyMaxLines) excess = st.lines - Math.floor((limits.historyMaxLines * 3) / 4);
        if (st.bytes > limits.historyMaxBytes) {
          // Approximate lines for the byte bound from the mean line size.
          const keep = Math.floor(((limits.historyMaxBytes * 3) / 4) / Math.max(1, st.bytes / st.lines));
          excess = Math.max(excess, st.lines - keep);
        }
        if (st.oldest_ms < now - limits.historyMaxAgeMs) excess = Math.max(excess, store.countOlderThan(st.app_id, now - limits.historyMaxAgeMs));
        if (excess <= 0) continue;
        try {
          const a = archiveOldest(st.app_id, excess);
          if (a) made.push(a);
        } catch (err) {
          deps.logger.error({ err, app: st.app_id }, 'logs: rotation into an archive failed');
        }
        for (const old of store.archivesBeyond(st.app_id, limits.archivesMaxPerApp)) removeArchive(old);
      }
      return made;
    },

    /**
     * Newest first. `cursor` (what next_cursor gave) or `page` (the Go CLI's) select the slice; the
     * cursor wins when both come. next_cursor is the seq of the last archive returned.
     */
    list(appId: string, opts: { cursor?: string; page?: number }): { archives: ArchiveRow[]; next_cursor: string; has_more: boolean } {
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
