import { type Db, tx } from '../../db/database.ts';
import { type Logger } from '../../shared/logger.ts';
import { type RouterRecordTuple, type StatsStore } from './stats.store.ts';

/** What the router reports per request (a subset of its RouterRequestRecord: only what metrics need). */
export interface RouterRequestInput {
  appId: string;
  time: number;
  status: number;
  durationMs: number;
  container: string | null;
}

/**
 * Batches router records: the router's hot path only pushes a tuple; rows are written in one
 * transaction every `flushMs` or when `maxBatch` are pending. Readers call flush() first so a
 * query always sees every request recorded before it.
 */
export function createRouterRecorder(deps: {
  db: Db;
  store: StatsStore;
  logger: Logger;
  flushMs?: number;
  maxBatch?: number;
}) {
  const flushMs = deps.flushMs ?? 250;
  const maxBatch = deps.maxBatch ?? 500;
  let pending: RouterRecordTuple[] = [];
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0 || !deps.db.open) return;
    const batch = pending;
    pending = [];
    try {
      tx(deps.db, () => {
        for (const r of batch) deps.store.insertRequest(r);
      });
    } catch (err) {
      deps.logger.error({ err, dropped: batch.length }, 'could not store router records');
    }
  }

  return {
    record(rec: RouterRequestInput): void {
      if (stopped) return;
      pending.push([rec.appId, rec.time, rec.status, rec.durationMs, rec.container]);
      if (pending.length >= maxBatch) flush();
      else if (!timer) {
        timer = setTimeout(flush, flushMs);
        timer.unref();
      }
    },
    flush,
    stop(): void {
      flush();
      stopped = true;
    },
  };
}

export type RouterRecorder = ReturnType<typeof createRouterRecorder>;
