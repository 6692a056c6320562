// Syslog receivers for tests, on 127.0.0.1 port 0: TCP with RFC 6587 octet counting, and UDP.

import { createSocket } from 'node:dgram';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';

export interface Received {
  raw: string;
  pri: number;
  version: string;
  timestamp: string;
  hostname: string;
  appName: string;
  procId: string;
  msgId: string;
  sd: string;
  msg: string;
}

const RFC5424 = /^<(\d{1,3})>(1) (\S+) (\S+) (\S+) (\S+) (\S+) (-|(?:\[(?:[^\]"\\]|\\.|"(?:[^"\\]|\\.)*")*\])+) (.*)$/s;

/** Parses one RFC 5424 message, or throws: the tests check well-formedness with it. */
export function parse5424(raw: string): Received {
  const m = RFC5424.exec(raw);
  if (!m) throw new Error(`not an RFC 5424 message: ${JSON.stringify(raw)}`);
  return {
    raw,
    pri: Number(m[1]),
    version: m[2],
    timestamp: m[3],
    hostname: m[4],
    appName: m[5],
    procId: m[6],
    msgId: m[7],
    sd: m[8],
    msg: m[9],
  };
}

export interface Receiver {
  port: number;
  messages: Received[];
  /** Framing errors seen (TCP): must stay empty. */
  errors: string[];
  close(): Promise<void>;
}

export async function tcpSyslogServer(port = 0): Promise<Receiver> {
  const messages: Received[] = [];
  const errors: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    let buf = Buffer.alloc(0);
    s.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const sp = buf.indexOf(0x20);
        if (sp < 0) return;
        const lenText = buf.subarray(0, sp).toString('ascii');
        if (!/^[1-9]\d*$/.test(lenText)) {
          errors.push(`bad frame length ${JSON.stringify(lenText)}`);
          buf = Buffer.alloc(0);
          return;
        }
        const len = Number(lenText);
        if (buf.length < sp + 1 + len) return;
        const raw = buf.subarray(sp + 1, sp + 1 + len).toString('utf8');
        buf = buf.subarray(sp + 1 + len);
        try {
          messages.push(parse5424(raw));
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
    });
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    messages,
    errors,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export async function udpSyslogServer(): Promise<Receiver> {
  const messages: Received[] = [];
  const errors: string[] = [];
  const sock = createSocket('udp4');
  sock.on('message', (m) => {
    try {
      messages.push(parse5424(m.toString('utf8')));
    } catch (err) {
      errors.push((err as Error).message);
    }
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  return { port: sock.address().port, messages, errors, close: () => new Promise((r) => sock.close(() => r())) };
}

/** A port on 127.0.0.1 nobody listens on (bound then released). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
