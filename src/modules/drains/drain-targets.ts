// Where a drain's lines go: a syslog receiver (TCP, TLS or UDP) or a file. Each target owns a
// bounded queue and its own pump; `enqueue` never blocks or throws, so an unreachable or slow
// target delays nothing else. Unreachable: retried with exponential back-off; while it is down
// lines wait in the queue, and past its bound the oldest are dropped (counted, warned about).
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { isIP } from 'node:net';
import type { Logger } from '../../shared/logger.ts';

export interface TargetOptions {
  queueMaxLines: number;
  retryMinMs: number;
  retryMaxMs: number;
  tlsRejectUnauthorized: boolean;
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
const CONNECT_TIMEOUT_MS = 5_000;
/** Largest datagram payload sent; longer messages are truncated (RFC 5426 allows it). */
const UDP_MAX_BYTES = 65_000;

/** Queue, drop policy and back-off shared by every target; `send` pushes as much as it can. */
abstract class QueuedTarget implements DrainTarget {
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
        this.opts.logger.warn({ drain: this.opts.label, dropped: this.droppedSinceWarn, total: this.stats.dropped }, 'log drain: queue full, oldest lines dropped');
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
    this.opts.logger.debug({ drain: this.opts.label, err: (err as Error)?.message, retryMs: this.retryMs }, 'log drain unreachable, retrying');
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

/** Stream transports (TCP, TLS): RFC 6587 octet-counted frames, written as the socket drains. */
export class StreamSyslogTarget extends QueuedTarget {
  private socket: Socket | null = null;
  private ready = false;
  private blocked = false;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly tls: boolean,
    opts: TargetOptions,
  ) {
    super(opts);
  }

  protected kick(): void {
    if (this.closed || this.retryTimer) return;
    if (!this.socket) return this.open();
    if (!this.ready || this.blocked) return;
    while (this.queue.length) {
      const chunk = this.take((m) => `${Buffer.byteLength(m)} ${m}`);
      if (!this.socket.write(chunk)) {
        this.blocked = true;
        this.socket.once('drain', () => {
          this.blocked = false;
          this.kick();
        });
        return;
      }
    }
  }

  private open(): void {
    const onReady = () => {
      s.setTimeout(0);
      this.ready = true;
      this.succeeded();
      this.kick();
    };
    const s: Socket = this.tls
      ? tlsConnect({ host: this.host, port: this.port, servername: isIP(this.host) ? undefined : this.host, rejectUnauthorized: this.opts.tlsRejectUnauthorized }, onReady)
      : netConnect({ host: this.host, port: this.port }, onReady);
    this.socket = s;
    s.setNoDelay(true);
    s.setTimeout(CONNECT_TIMEOUT_MS, () => s.destroy(new Error('connect timeout')));
    let error: unknown = null;
    s.on('error', (err) => (error = err));
    s.on('close', () => {
      this.socket = null;
      this.ready = false;
      this.blocked = false;
      // What the receiver reads we cannot know: lines written before a drop are not resent.
      if (!this.closed) this.failed(error ?? new Error('connection closed'));
    });
    s.on('data', () => undefined); // receivers may answer; ignore
  }

  close(): void {
    super.close();
    this.socket?.destroy();
    this.socket = null;
  }
}

/** UDP (RFC 5426): one message per datagram, no framing; a lost datagram is lost. */
export class UdpSyslogTarget extends QueuedTarget {
  private socket: UdpSocket | null = null;
  private inFlight = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
    opts: TargetOptions,
  ) {
    super(opts);
  }

  protected kick(): void {
    if (this.closed) return;
    if (!this.socket) {
      this.socket = createSocket(isIP(this.host) === 6 ? 'udp6' : 'udp4');
      this.socket.on('error', (err) => this.failed(err));
      this.socket.unref();
      this.succeeded();
    }
    while (this.queue.length && this.inFlight < 256) {
      let buf = Buffer.from(this.queue.shift()!, 'utf8');
      if (buf.length > UDP_MAX_BYTES) buf = buf.subarray(0, UDP_MAX_BYTES);
      this.inFlight++;
      this.socket.send(buf, this.port, this.host, (err) => {
        this.inFlight--;
        if (err) this.stats.failures++;
        else this.stats.sent++;
        if (this.queue.length) this.kick();
      });
    }
    this.stats.queued = this.queue.length;
  }

  close(): void {
    super.close();
    this.socket?.close();
    this.socket = null;
  }
}

/** A file under the data dir, one line per log line (append mode: survives restarts). */
export class FileTarget extends QueuedTarget {
  private out: WriteStream | null = null;
  private blocked = false;

  constructor(
    readonly path: string,
    opts: TargetOptions,
  ) {
    super(opts);
  }

  protected kick(): void {
    if (this.closed || this.retryTimer || this.blocked) return;
    if (!this.out) {
      mkdirSync(dirname(this.path), { recursive: true });
      // A large buffer: under a flood several chunks go down in one writev instead of a wait for 'drain' each.
      const out = createWriteStream(this.path, { flags: 'a', highWaterMark: 1024 * 1024 });
      out.on('error', (err) => {
        this.out = null;
        this.blocked = false;
        this.failed(err);
      });
      this.out = out;
      this.succeeded();
    }
    while (this.queue.length && this.out) {
      if (!this.out.write(this.take((m) => `${m}\n`))) {
        this.blocked = true;
        this.out.once('drain', () => {
          this.blocked = false;
          this.kick();
        });
        return;
      }
    }
  }

  close(): void {
    super.close();
    this.out?.end();
    this.out = null;
  }
}
