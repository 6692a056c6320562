// Syslog over UDP (RFC 5426): one RFC 5424 message per datagram.
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { isIP } from 'node:net';
import { QueuedTarget, type TargetOptions } from '../drain-targets.ts';
import { defineTransport, noOptions } from '../drain-transport.ts';
import { syslogMessage } from '../syslog-format.ts';

/** Largest datagram payload sent; longer messages are truncated (RFC 5426 allows it). */
const UDP_MAX_BYTES = 65_000;

/** UDP (RFC 5426): one message per datagram, no framing; a lost datagram is lost. */
class UdpSyslogTarget extends QueuedTarget {
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
    while (this.inFlight < 256) {
      const next = this.queue.shift();
      if (next === undefined) break;
      let buf = Buffer.from(next, 'utf8');
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

export const udpTransport = defineTransport({
  schemes: ['udp'],
  reach: 'network',
  url: { suffix: '+udp', scheme: 'udp' },
  options: noOptions,
  create: (target, queue) => new UdpSyslogTarget(target.host, target.port, queue),
  format: syslogMessage,
});
