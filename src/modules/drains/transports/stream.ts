// Syslog over a stream (TCP, or TLS per RFC 5425): RFC 6587 octet-counted RFC 5424 messages.
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { QueuedTarget, type TargetOptions } from '../drain-targets.ts';
import { defineTransport, noOptions } from '../drain-transport.ts';
import { syslogMessage } from '../syslog-format.ts';

const CONNECT_TIMEOUT_MS = 5_000;

/** Stream transports (TCP, TLS): RFC 6587 octet-counted frames, written as the socket drains. */
class StreamSyslogTarget extends QueuedTarget {
  private socket: Socket | null = null;
  private ready = false;
  private blocked = false;

  constructor(
    private readonly host: string,
    private readonly port: number,
    /** null: plain TCP. */
    private readonly tls: TlsOptions | null,
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
      ? tlsConnect(
          {
            host: this.host,
            port: this.port,
            servername: isIP(this.host) ? undefined : this.host,
            rejectUnauthorized: this.tls.rejectUnauthorized,
          },
          onReady,
        )
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

export const tcpTransport = defineTransport({
  schemes: ['tcp'],
  reach: 'network',
  url: { suffix: '', scheme: 'tcp' },
  options: noOptions,
  create: (target, queue) => new StreamSyslogTarget(target.host, target.port, null, queue),
  format: syslogMessage,
});

/** The TLS transport's own options. */
interface TlsOptions {
  /** Verify the receiver's certificate (logs.drains.tlsRejectUnauthorized). */
  rejectUnauthorized: boolean;
}

export const tlsTransport = defineTransport<TlsOptions>({
  schemes: ['tls', 'tcp+tls'],
  ports: ['6514'],
  reach: 'network',
  url: { suffix: '+tls', scheme: 'tcp+tls' },
  options: (config) => ({ rejectUnauthorized: config.tlsRejectUnauthorized }),
  create: (target, queue, tls) => new StreamSyslogTarget(target.host, target.port, tls, queue),
  format: syslogMessage,
});
