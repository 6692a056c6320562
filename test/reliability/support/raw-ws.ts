// WebSocket by hand over a raw TCP socket: the handshake and frames as an attacker writes them —
// reserved bits set, unmasked client frames, invalid UTF-8, impossible lengths — which no client
// library would send.

import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { eventually } from '../../support/docker-cli.ts';

export interface RawConnection {
  socket: Socket;
  status: number;
  head: string;
  /** Bytes received after the response head. */
  data(): Buffer;
  closed(): boolean;
  /** The status code of the first close frame the server sent, once one came (null before). */
  closeCode(): number | null;
  destroy(): void;
}

/** Connects, sends `firstLine` + headers, and resolves once the response head arrived (or the socket closed). */
export function rawRequest(port: number, firstLine: string, headers: Record<string, string>): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let headEnd = -1;
    let closed = false;
    socket.on('error', () => undefined); // resets are expected: the server may cut the connection
    socket.on('close', () => {
      closed = true;
      if (headEnd < 0) resolve(make(0, buf.toString('latin1')));
    });
    const make = (status: number, head: string): RawConnection => ({
      socket,
      status,
      head,
      data: () => (headEnd < 0 ? Buffer.alloc(0) : buf.subarray(headEnd + 4)),
      closed: () => closed,
      closeCode: () => closeCodeOf(headEnd < 0 ? Buffer.alloc(0) : buf.subarray(headEnd + 4)),
      destroy: () => socket.destroy(),
    });
    socket.on('data', (b: Buffer) => {
      buf = Buffer.concat([buf, b]);
      if (headEnd >= 0) return;
      headEnd = buf.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = buf.subarray(0, headEnd).toString('latin1');
      resolve(make(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head));
    });
    socket.once('connect', () => {
      socket.write(
        `${firstLine}\r\n${Object.entries(headers)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')}\r\n`,
      );
    });
    socket.once('error', reject);
  });
}

export function rawUpgrade(port: number, path: string, headers: Record<string, string> = {}): Promise<RawConnection> {
  return rawRequest(port, `GET ${path} HTTP/1.1`, {
    Host: `127.0.0.1:${port}`,
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
    'Sec-WebSocket-Version': '13',
    ...headers,
  });
}

/** One frame; `mask: false` makes it invalid from a client; `length` lies about the payload length. */
export function frame(opts: {
  fin?: boolean;
  rsv?: number;
  opcode: number;
  payload?: Buffer;
  mask?: boolean;
  length?: bigint;
}): Buffer {
  const payload = opts.payload ?? Buffer.alloc(0);
  const mask = opts.mask ?? true;
  const len = opts.length ?? BigInt(payload.length);
  const b0 = ((opts.fin ?? true) ? 0x80 : 0) | ((opts.rsv ?? 0) << 4) | opts.opcode;
  let head: Buffer;
  if (len < 126n) head = Buffer.from([b0, (mask ? 0x80 : 0) | Number(len)]);
  else if (len < 65536n) {
    head = Buffer.alloc(4);
    head[0] = b0;
    head[1] = (mask ? 0x80 : 0) | 126;
    head.writeUInt16BE(Number(len), 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = b0;
    head[1] = (mask ? 0x80 : 0) | 127;
    head.writeBigUInt64BE(len, 2);
  }
  if (!mask) return Buffer.concat([head, payload]);
  const key = randomBytes(4);
  const masked = Buffer.from(payload.map((x, i) => x ^ key[i % 4]));
  return Buffer.concat([head, key, masked]);
}

/** The bad frames every WebSocket path is sent, with the close codes RFC 6455 gives them. */
export const BAD_FRAMES: { name: string; bytes: Buffer; codes: number[] }[] = [
  { name: 'RSV1-3 bits set', bytes: frame({ rsv: 7, opcode: 1, payload: Buffer.from('hi') }), codes: [1002] },
  { name: 'RSV2 bit set', bytes: frame({ rsv: 2, opcode: 2, payload: Buffer.from('hi') }), codes: [1002] },
  {
    name: 'unmasked client frame',
    bytes: frame({ opcode: 1, payload: Buffer.from('hi'), mask: false }),
    codes: [1002],
  },
  {
    name: 'invalid UTF-8 in a text frame',
    bytes: frame({ opcode: 1, payload: Buffer.from([0xc3, 0x28, 0xff, 0xfe]) }),
    codes: [1007],
  },
  { name: 'length beyond 2^53', bytes: frame({ opcode: 2, length: 2n ** 63n - 1n }), codes: [1009] },
  {
    name: 'length beyond the message bound (64 MiB)',
    bytes: frame({ opcode: 2, length: 64n * 1024n * 1024n }),
    codes: [1009],
  },
  { name: 'unknown opcode', bytes: frame({ opcode: 0x3, payload: Buffer.from('x') }), codes: [1002] },
  {
    name: 'fragmented control frame',
    bytes: frame({ fin: false, opcode: 0x9, payload: Buffer.from('x') }),
    codes: [1002],
  },
  { name: 'invalid close code', bytes: frame({ opcode: 0x8, payload: Buffer.from([0x03, 0xe7]) }), codes: [1002] },
];

/** Close code of the first close frame (opcode 8) in what the server sent, skipping earlier frames. */
function closeCodeOf(data: Buffer): number | null {
  let i = 0;
  while (i + 2 <= data.length) {
    const opcode = data[i] & 0x0f;
    let len = data[i + 1] & 0x7f;
    let off = i + 2;
    if (len === 126) {
      if (off + 2 > data.length) return null;
      len = data.readUInt16BE(off);
      off += 2;
    } else if (len === 127) {
      if (off + 8 > data.length) return null;
      len = Number(data.readBigUInt64BE(off));
      off += 8;
    }
    if (off + len > data.length) return null;
    if (opcode === 0x8) return len >= 2 ? data.readUInt16BE(off) : 1005;
    i = off + len;
  }
  return null;
}

/** Waits for the server's close frame (or the connection's end); the code, or 'closed' without one. */
export async function closedBy(c: RawConnection, what: string): Promise<number | 'closed'> {
  return eventually(() => c.closeCode() ?? (c.closed() ? 'closed' : null), { timeoutMs: 15_000, what });
}
