// The queue every drain target shares (the targets themselves: transports/). Each target owns a
// bounded queue and its own pump; `enqueue` never blocks or throws, so an unreachable or slow
// target delays nothing else. Unreachable: retried with exponential back-off; while it is down
// lines wait in the queue, and past its bound the oldest are dropped (counted, warned about).
import { type Logger } from '../../shared/logger.ts';

/** What every target's queue needs; a transport's own options come apart (drain-transport.ts). */
export interface TargetOptions {
  queueMaxLines: number;
  retryMinMs: number;
  retryMaxMs: number;
  logger: Logger;
  /** For log messages: which drain. */
  label: string;
}

export interface DrainTarget {
  /** Items are ready-to-send messages: syslog messages, or file lines without their newline. */
  enqueue(messages: string[]): void;
  close(): void;
  readonly stats: { sent: number; dropped: number; failures: number; queued: number; connected: boolean };
}

const CHUNK_BYTES = 64 * 1024;

/** Queue, drop policy and back-off shared by every target; `send` pushes as much as it can. */
export abstract class QueuedTarget implements DrainTarget {
  protected queue: string[] = [];
  protected retryMs: number;
  protected retryTimer: NodeJS.Timeout | null = null;
  protected closed = false;
  private lastWarn = 0;
  private droppedSinceWarn = 0;
  readonly stats = { sent: 0, dropped: 0, failures: 0, queued: 0, connected: false };

  constructor(protected readonly opts: TargetOptions) {
    this.retryMs = opts.retryMinMs;
  }

  enqueue(messages: string[]): void {
    if (this.closed) return;
    for (const m of messages) this.queue.push(m);
    const over = this.queue.length - this.opts.queueMaxLines;
    if (over > 0) {
      this.queue.splice(0, over);
      this.stats.dropped += over;
      this.droppedSinceWarn += over;
      if (Date.now() - this.lastWarn > 10_000) {
        this.opts.logger.warn(
          { drain: this.opts.label, dropped: this.droppedSinceWarn, total: this.stats.dropped },
          'log drain: queue full, oldest lines dropped',
        );
        this.lastWarn = Date.now();
        this.droppedSinceWarn = 0;
      }
    }
    this.stats.queued = this.queue.length;
    this.kick();
  }

  /** Takes up to CHUNK_BYTES of queued messages, each mapped by `frame`. */
  protected take(frame: (m: string) => string): string {
    let out = '';
    let n = 0;
    while (n < this.queue.length && out.length < CHUNK_BYTES) out += frame(this.queue[n++]);
    this.queue.splice(0, n);
    this.stats.sent += n;
    this.stats.queued = this.queue.length;
    return out;
  }

  /** Connection lost or refused: try again later, each time waiting longer (up to retryMaxMs). */
  protected failed(err: unknown): void {
    this.stats.failures++;
    this.stats.connected = false;
    if (this.closed || this.retryTimer) return;
    this.opts.logger.debug(
      { drain: this.opts.label, err: (err as Error)?.message, retryMs: this.retryMs },
      'log drain unreachable, retrying',
    );
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.kick();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, this.opts.retryMaxMs);
  }

  protected succeeded(): void {
    this.stats.connected = true;
    this.retryMs = this.opts.retryMinMs;
  }

  protected abstract kick(): void;

  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.queue = [];
  }
}
