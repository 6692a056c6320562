// Terminals on a one-off container's attach URL, driven like the official clients do:
// the Go CLI's hijacked `CONNECT` (CLI apps/run.go connectToRunServer) and a browser's WebSocket.
import { connect as netConnect, type Socket } from 'node:net';
import { WebSocket } from 'ws';
import { type Harness, TOKENS } from '../harness.ts';
import { waitForOperation } from './apps.ts';
import { eventually } from './docker-cli.ts';

export interface Terminal {
  status: number;
  /** The bytes of the first read: the response head, alone (the Go CLI drops anything after it). */
  firstChunk: string;
  /** Everything received after the response head. */
  output(): string;
  write(text: string | Buffer): void;
  /** Resolves with the output once it matches. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  ended: Promise<void>;
  destroy(): void;
  socket: Socket;
}

const basic = `Basic ${Buffer.from(`:${TOKENS.dev}`).toString('base64')}`;

/** `CONNECT <path> HTTP/1.1` written as Go's http.Request.Write does, then raw bytes both ways. */
export function connectTerminal(attachUrl: string): Promise<Terminal> {
  const u = new URL(attachUrl);
  return new Promise((resolve, reject) => {
    const socket = netConnect(Number(u.port), u.hostname);
    let head = '';
    let firstChunk: string | null = null;
    let out = '';
    let headDone = false;
    const ended = new Promise<void>((ok) => socket.on('close', () => ok()));
    socket.on('error', reject);
    socket.on('connect', () =>
      socket.write(
        `CONNECT ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUser-Agent: Go-http-client/1.1\r\nAuthorization: ${basic}\r\n\r\n`,
      ),
    );
    socket.on('data', (b: Buffer) => {
      if (firstChunk === null) firstChunk = b.toString('latin1');
      if (headDone) {
        out += b.toString('utf8');
        return;
      }
      head += b.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headDone = true;
      out += head.slice(end + 4);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({
        status,
        firstChunk: firstChunk!,
        output: () => out,
        write: (t) => void socket.write(t),
        waitFor: (re, timeoutMs = 15_000) =>
          eventually(() => (re.test(out) ? out : null), {
            timeoutMs,
            what: `terminal output matching ${re} (got ${JSON.stringify(out.slice(-300))})`,
          }),
        ended,
        destroy: () => socket.destroy(),
        socket,
      });
    });
    socket.on(
      'end',
      () =>
        !headDone &&
        resolve({
          status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
          firstChunk: firstChunk ?? '',
          output: () => head,
          write: () => undefined,
          waitFor: () => Promise.reject(new Error('closed')),
          ended,
          destroy: () => socket.destroy(),
          socket,
        }),
    );
  });
}

export interface WsTerminal {
  ws: WebSocket;
  output(): string;
  /** Text (JSON) messages from the server. */
  controls: Record<string, unknown>[];
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  closed: Promise<{ code: number; reason: string }>;
}

export function wsTerminal(attachUrl: string): Promise<WsTerminal> {
  const ws = new WebSocket(attachUrl.replace(/^http/, 'ws'));
  let out = '';
  const controls: Record<string, unknown>[] = [];
  ws.on('message', (data, isBinary) => {
    if (isBinary) out += Buffer.from(data as Buffer).toString('utf8');
    else controls.push(JSON.parse(String(data)));
  });
  const closed = new Promise<{ code: number; reason: string }>((ok) =>
    ws.on('close', (code, reason) => ok({ code, reason: reason.toString() })),
  );
  return new Promise((resolve, reject) => {
    ws.on('open', () =>
      resolve({
        ws,
        output: () => out,
        controls,
        waitFor: (re, timeoutMs = 15_000) =>
          eventually(() => (re.test(out) ? out : null), {
            timeoutMs,
            what: `ws output matching ${re} (got ${JSON.stringify(out.slice(-300))})`,
          }),
        closed,
      }),
    );
    ws.on('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })),
    );
    ws.on('error', reject);
  });
}

/** POST /run (attached), then the operation as the Go CLI polls it, to its attach_url. */
export async function runAttached(h: Harness, app: string, command: string, extra: Record<string, unknown> = {}) {
  const res = await h.call('POST', `/v1/apps/${app}/run`, {
    body: { command, env: { TERM: 'xterm' }, size: 'M', detached: false, has_uploads: false, ...extra },
  });
  if (res.status !== 200) throw new Error(`run: ${res.status} ${res.text}`);
  const op = await waitForOperation(h, res.headers.get('location')!);
  if (op.status !== 'done') throw new Error(`start-one-off operation: ${JSON.stringify(op)}`);
  return { res, op, container: res.body.container, attachUrl: op.start_one_off_data.attach_url as string };
}

/** multipart/form-data with one `file` part, written as Go's multipart.Writer does (the name as given). */
export async function upload(
  attachUrl: string,
  name: string,
  content: string | Buffer,
  field = 'file',
): Promise<{ status: number; text: string }> {
  const boundary = 'emulatortestboundary0123456789';
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    Buffer.isBuffer(content) ? content : Buffer.from(content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await fetch(`${attachUrl}/files`, {
    method: 'POST',
    body,
    headers: { authorization: basic, 'content-type': `multipart/form-data; boundary=${boundary}` },
  });
  return { status: res.status, text: await res.text() };
}
