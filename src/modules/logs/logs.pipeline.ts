// The one way into the logs history: a bounded queue, flushed in batches (one SQLite transaction
// each, lines and collection cursors together), then handed to the live hub and the drains.
//
// Back-pressure policy (docs/fidelity.md "Logs"): container output is never dropped here. When the
// queue is full the collector stops reading the container's stream (`room()`), Docker keeps the
// backlog in its own log file, and reading resumes when the queue drains. Lines pushed through
// `append` (router access lines) cannot wait: past the bound they are dropped, counted, and a
// warning is logged at most every 10 s.
import { type Db } from '../../db/database.ts';
import { type Clock } from '../../shared/clock.ts';
import { type Logger } from '../../shared/logger.ts';
import { newLine, type StoredLine, timestampFromMs } from './log-line.ts';
import { type LogsStore } from './logs.store.ts';

/** Receives every stored batch, in order. Must not block (hub and drains queue on their side). */
export interface LineSink {
  deliver(lines: StoredLine[]): void;
}

/** Calls fn for each run of consecutive lines of one app (a batch is usually a single app: no copy then). */
export function forEachAppRun(lines: StoredLine[], fn: (appId: string, run: StoredLine[]) => void): void {
  let i = 0;
  while (i < lines.length) {
    const appId = lines[i].app_id;
    let j = i + 1;
    while (j < lines.length && lines[j].app_id === appId) j++;
    fn(appId, i === 0 && j === lines.length ? lines : lines.slice(i, j));
    i = j;
  }
}

export interface Cursor {
  lastTs: string;
  /** Texts stored at exactly lastTs (a multiset: duplicates kept). */
  lastTexts: string[];
}

export interface PipelineDeps {
  db: Db;
  store: LogsStore;
  clock: Clock;
  logger: Logger;
  queueMaxLines: number;
  batchMaxLines: number;
  /** Router lines are kept only for apps with router_logs on. */
  routerLogsOn: (appId: string) => boolean;
  /** Called after each batch with the number of lines stored and the lines (rotation watches them). */
  onStored?: (count: number, lines: StoredLine[]) => void;
}

/**
 * While lines keep coming (the previous batch was taken less than this ago), the next batch waits for the rest of
 * that window: a burst is stored and sent in batches of hundreds of lines (one transaction, one WebSocket message
 * a subscriber, one drain write each) rather than in one per read of the engine's stream, whose chunks hold a
 * line or a few when the reader keeps up (issue 40: per-batch costs were most of the emulator's CPU a line). A
 * line after a pause is flushed at once: a quiet app's lines wait for nothing. Real time, not the emulator's
 * clock (a manual clock does not move while a test waits for its lines).
 */
const COALESCE_MS = 5;

/** What a taken slot of the queue holds until the queue is compacted (the line itself is let go). */
const TAKEN = newLine('', '', 0, '', 0, '');

export function createLogsPipeline(deps: PipelineDeps) {
  const { store, logger } = deps;
  const sinks: LineSink[] = [];
  // Lines waiting: queue[head…], with the engine id of each container line beside it (router lines: undefined).
  // Taken by index, the arrays dropped once emptied: no copy of what waits a batch.
  let queue: StoredLine[] = [];
  let engines: (string | undefined)[] = [];
  let head = 0;
  const waiting = () => queue.length - head;
  let scheduled = false;
  // The coalescing window's timer (null: the flush, if scheduled, runs on the next turn of the loop).
  let windowTimer: NodeJS.Timeout | null = null;
  let lastTaken = Number.NEGATIVE_INFINITY;
  let roomWaiters: (() => void)[] = [];
  let idleWaiters: (() => void)[] = [];
  const persisted = new Map<string, Cursor & { appId: string }>();
  // Ingest-time cursors: a stream re-opened in this process resumes after lines still queued.
  const live = new Map<string, Cursor>();
  const counters = { stored: 0, dropped: 0, batches: 0, failedBatches: 0 };
  let droppedSinceWarn = 0;
  let lastWarn = 0;

  const persistedCursor = (engineId: string) => {
    let c = persisted.get(engineId);
    if (!c) {
      const row = store.cursor(engineId);
      if (row)
        persisted.set(
          engineId,
          (c = { appId: row.app_id, lastTs: row.last_ts, lastTexts: JSON.parse(row.last_texts) as string[] }),
        );
    }
    return c;
  };

  function schedule(): void {
    if (scheduled) {
      // A full batch is waiting: no reason to wait for the window's end.
      if (windowTimer && waiting() >= deps.batchMaxLines) {
        clearTimeout(windowTimer);
        windowTimer = null;
        setImmediate(flush);
      }
      return;
    }
    scheduled = true;
    const wait = lastTaken + COALESCE_MS - performance.now();
    if (wait > 0 && waiting() < deps.batchMaxLines) windowTimer = setTimeout(flush, wait);
    else setImmediate(flush);
  }

  function flush(): void {
    scheduled = false;
    windowTimer = null;
    if (!waiting()) return settle();
    lastTaken = performance.now();
    const from = head;
    const to = Math.min(queue.length, head + deps.batchMaxLines);
    const batch = from === 0 && to === queue.length ? queue : queue.slice(from, to);
    const batchEngines = batch === queue ? engines : engines.slice(from, to);
    if (to === queue.length) {
      queue = [];
      engines = [];
      head = 0;
    } else {
      // The slots taken let their lines go at once; the arrays are compacted once half is taken.
      queue.fill(TAKEN, from, to);
      head = to;
      if (head > 4096 && head * 2 > queue.length) {
        queue = queue.slice(head);
        engines = engines.slice(head);
        head = 0;
      }
    }
    try {
      deps.db.transaction(() => {
        store.insertAll(batch);
        saveCursors(batch, batchEngines);
      })();
    } catch (err) {
      // The batch is lost (disk full, database closed…): count it, never crash collection.
      counters.failedBatches++;
      counters.dropped += batch.length;
      logger.error({ err, lines: batch.length }, 'logs: a batch could not be stored');
      return next();
    }
    counters.stored += batch.length;
    counters.batches++;
    for (const s of sinks) {
      try {
        s.deliver(batch);
      } catch (err) {
        logger.error({ err }, 'logs: a sink failed');
      }
    }
    deps.onStored?.(batch.length, batch);
    next();
  }

  /** Each container stream's newest timestamp in the batch and the texts stored at it, in the same transaction. */
  function saveCursors(batch: StoredLine[], batchEngines: (string | undefined)[]): void {
    // Newest timestamp per container stream (no allocation a line), then the texts stored at it.
    const newest = new Map<string, { appId: string; ts: string }>();
    let engineId: string | undefined;
    let c = { appId: '', ts: '' };
    for (let i = 0; i < batch.length; i++) {
      const id = batchEngines[i];
      if (!id) continue;
      const l = batch[i];
      if (id !== engineId) {
        engineId = id;
        const known = newest.get(engineId);
        if (known) c = known;
        else {
          c = { appId: l.app_id, ts: l.ts };
          newest.set(engineId, c);
        }
      }
      if (l.ts > c.ts) {
        c.ts = l.ts;
        c.appId = l.app_id;
      }
    }
    for (const [engineId, c] of newest) {
      const prev = persistedCursor(engineId);
      if (prev && prev.lastTs > c.ts) continue;
      const texts = prev && prev.lastTs === c.ts ? [...prev.lastTexts] : [];
      for (let i = 0; i < batch.length; i++)
        if (batch[i].ts === c.ts && batchEngines[i] === engineId) texts.push(batch[i].text);
      store.saveCursor({ engine_id: engineId, app_id: c.appId, last_ts: c.ts, last_texts: JSON.stringify(texts) });
      persisted.set(engineId, { appId: c.appId, lastTs: c.ts, lastTexts: texts });
    }
  }

  function next(): void {
    if (waiting() < deps.queueMaxLines && roomWaiters.length) {
      const w = roomWaiters;
      roomWaiters = [];
      for (const r of w) r();
    }
    if (waiting()) schedule();
    else settle();
  }

  function settle(): void {
    const w = idleWaiters;
    idleWaiters = [];
    for (const r of w) r();
    // Anyone waiting for room gets it once the queue is empty.
    const rw = roomWaiters;
    roomWaiters = [];
    for (const r of rw) r();
  }

  return {
    counters,
    addSink(s: LineSink): void {
      sinks.push(s);
    },

    /**
     * Container output (the collector): never dropped; call room() when full() says so. The line (from
     * newLine()) is the object stored and delivered: the caller hands it over.
     */
    ingest(line: StoredLine, engineId?: string): void {
      if (engineId) {
        const c = live.get(engineId);
        if (!c) live.set(engineId, { lastTs: line.ts, lastTexts: [line.text] });
        else if (line.ts > c.lastTs) {
          // In place when it holds one text (the usual case): cursorOf() hands out copies.
          c.lastTs = line.ts;
          if (c.lastTexts.length === 1) c.lastTexts[0] = line.text;
          else c.lastTexts = [line.text];
        } else if (line.ts === c.lastTs) c.lastTexts.push(line.text);
      }
      queue.push(line);
      engines.push(engineId);
      schedule();
    },
    full: () => waiting() >= deps.queueMaxLines,
    room(): Promise<void> {
      if (waiting() < deps.queueMaxLines) return Promise.resolve();
      return new Promise((r) => roomWaiters.push(r));
    },

    /** Lines from other areas (router access lines, …). Returns false when dropped. */
    append(appId: string, container: string, text: string, opts: { timeMs?: number; stream?: 0 | 1 } = {}): boolean {
      if (container === 'router' && !deps.routerLogsOn(appId)) return false;
      if (waiting() >= deps.queueMaxLines) {
        counters.dropped++;
        droppedSinceWarn++;
        const now = deps.clock.now();
        if (now - lastWarn >= 10_000) {
          logger.warn(
            { dropped: droppedSinceWarn, total: counters.dropped },
            'logs: queue full, appended lines dropped',
          );
          lastWarn = now;
          droppedSinceWarn = 0;
        }
        return false;
      }
      const timeMs = opts.timeMs ?? deps.clock.now();
      for (const part of text.split('\n')) {
        if (part === '' && text !== '') continue;
        queue.push(newLine(appId, timestampFromMs(timeMs), timeMs, container, opts.stream ?? 0, part));
        engines.push(undefined);
      }
      schedule();
      return true;
    },

    /** Newest line taken from a container (queued or stored), for resuming without duplicates. */
    cursorOf(engineId: string): Cursor | null {
      const c = live.get(engineId) ?? persistedCursor(engineId);
      return c ? { lastTs: c.lastTs, lastTexts: [...c.lastTexts] } : null;
    },
    forgetCursor(engineId: string): void {
      live.delete(engineId);
      persisted.delete(engineId);
      store.deleteCursor(engineId);
    },

    /** Resolves once everything queued so far is stored and delivered. */
    idle(): Promise<void> {
      if (!waiting() && !scheduled) return Promise.resolve();
      return new Promise((r) => idleWaiters.push(r));
    },
    queued: waiting,
  };
}

export type LogsPipeline = ReturnType<typeof createLogsPipeline>;
