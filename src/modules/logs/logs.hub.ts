// Live subscribers of the logs stream (WebSocket and SSE alike): many per app, each with its own
// bounded buffer and pump. Collection never waits for a subscriber: one whose buffer overflows is
// closed (counted and logged) and the client reconnects, as the official CLI does on EOF.

import { type Clock, isoDate } from '../../shared/clock.ts';
import { type Logger } from '../../shared/logger.ts';
import { formattedLine, type StoredLine } from './log-line.ts';
import { forEachAppRun, type LineSink } from './logs.pipeline.ts';

/** How a subscriber's transport sends one event and closes (ws or SSE). */
export interface StreamSink {
  send(message: string): Promise<void>;
  close(reason: string): void;
}

export interface Subscription {
  close(reason?: string): void;
  /** Resolves when the subscription ends (client gone, too slow, or stop). */
  closed: Promise<void>;
}

/**
 * Lines per `log` event at most: under load the lines waiting share one event (the official clients
 * split `log` on \n), so a stored batch is one WebSocket message, not one per line. An idle
 * subscriber gets each line as soon as it is stored: no timer waits for more.
 */
const MAX_LINES_PER_EVENT = 2_000;
const MAX_BYTES_PER_EVENT = 256 * 1024;

/** Both keys: the real clients key on `event`, the documentation on `name` (research §2.4). */
export function logEvent(log: string, ts: string): string {
  return JSON.stringify({ event: 'log', name: 'log', log, timestamp: ts });
}
export function pingEvent(ms: number): string {
  return JSON.stringify({ event: 'ping', name: 'ping', timestamp: isoDate(ms) });
}

export function createLogsHub(deps: { logger: Logger; clock: Clock; pingMs: number; maxLines: number }) {
  const byApp = new Map<string, Set<Sub>>();
  const counters = { subscribers: 0, cutSlow: 0 };
  let stopping = false;

  class Sub implements Subscription {
    /** Lines waiting: pending[head…] (taken by index; the array is dropped once sent). */
    pending: StoredLine[] = [];
    head = 0;
    pumping = false;
    ended = false;
    lastSeq = 0;
    timer: NodeJS.Timeout;
    closed: Promise<void>;
    private done!: () => void;
    constructor(
      readonly appId: string,
      readonly match: ((container: string) => boolean) | null,
      readonly sink: StreamSink,
      readonly userId: string | null,
    ) {
      this.closed = new Promise((r) => (this.done = r));
      this.timer = setInterval(() => this.ping(), deps.pingMs);
    }
    offer(lines: StoredLine[]): void {
      for (const l of lines) {
        if (l.seq <= this.lastSeq || (this.match && !this.match(l.container))) continue;
        this.pending.push(l);
      }
      if (this.pending.length - this.head > deps.maxLines) {
        counters.cutSlow++;
        deps.logger.warn(
          { app: this.appId, buffered: this.pending.length - this.head },
          'logs: a stream subscriber is too slow, closing it',
        );
        return this.close('too slow: more than the buffered lines limit waiting');
      }
      void this.pump();
    }
    ping(): void {
      if (this.ended || this.pumping) return; // a busy stream needs no keepalive
      this.sink.send(pingEvent(deps.clock.now())).catch(() => this.close('send failed'));
    }
    /** Everything waiting, in events of up to MAX_LINES_PER_EVENT / MAX_BYTES_PER_EVENT, one send awaited at a time. */
    async pump(): Promise<void> {
      if (this.pumping || this.ended) return;
      this.pumping = true;
      try {
        while (this.head < this.pending.length && !this.ended) {
          const p = this.pending;
          const start = this.head;
          let text = formattedLine(p[start]);
          let i = start + 1;
          while (i < p.length && i - start < MAX_LINES_PER_EVENT && text.length < MAX_BYTES_PER_EVENT)
            text += `\n${formattedLine(p[i++])}`;
          if (i === p.length) {
            this.pending = [];
            this.head = 0;
          } else this.head = i;
          await this.sink.send(logEvent(text, p[start].ts));
        }
      } catch {
        this.close('send failed');
      } finally {
        this.pumping = false;
      }
    }
    close(reason = 'closed'): void {
      if (this.ended) return;
      this.ended = true;
      clearInterval(this.timer);
      this.pending = [];
      this.head = 0;
      byApp.get(this.appId)?.delete(this);
      counters.subscribers--;
      try {
        this.sink.close(reason);
      } catch {
        // the transport is already gone
      }
      this.done();
    }
  }

  const sink: LineSink = {
    deliver(lines) {
      if (!byApp.size) return;
      forEachAppRun(lines, (appId, run) => {
        const subs = byApp.get(appId);
        if (subs) for (const s of [...subs]) s.offer(run);
      });
    },
  };

  return {
    counters,
    sink,
    /**
     * Subscribes to an app's live lines, after sending `history` (lines already stored). Call it in
     * the same tick as reading the history: delivery happens after commit, on a later tick, so no
     * line is missed or sent twice (lines up to the history's last seq are skipped).
     */
    subscribe(
      appId: string,
      match: ((container: string) => boolean) | null,
      streamSink: StreamSink,
      history: StoredLine[],
      userId: string | null = null,
    ): Subscription {
      const sub = new Sub(appId, match, streamSink, userId);
      let set = byApp.get(appId);
      if (!set) byApp.set(appId, (set = new Set()));
      set.add(sub);
      counters.subscribers++;
      if (history.length) sub.offer(history);
      sub.lastSeq = history.length ? history[history.length - 1].seq : 0;
      // Arriving while the emulator stops: end at once, or the server would wait for this stream.
      if (stopping) sub.close('the emulator is stopping');
      return sub;
    },
    /** Closes an app's subscribers whose user `revoked(userId)` says lost access; how many were closed. */
    closeWhere(appId: string, revoked: (userId: string) => boolean, reason: string): number {
      let n = 0;
      for (const s of [...(byApp.get(appId) ?? [])]) {
        if (s.userId !== null && revoked(s.userId)) {
          s.close(reason);
          n++;
        }
      }
      return n;
    },
    count: (appId?: string) => (appId ? (byApp.get(appId)?.size ?? 0) : counters.subscribers),
    closeAll(reason = 'the emulator is stopping'): void {
      stopping = true;
      for (const set of byApp.values()) for (const s of [...set]) s.close(reason);
      byApp.clear();
    },
  };
}

export type LogsHub = ReturnType<typeof createLogsHub>;
