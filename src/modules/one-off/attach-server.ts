// The two ways a terminal reaches a one-off container through its attach URL:
// 1. `CONNECT <attach path>` hijacked, as the official Go CLI does (CLI `apps/run.go`
//    connectToRunServer): `HTTP/1.1 200 OK\r\n\r\n` flushed on its own, then raw bytes both ways.
// 2. A WebSocket upgrade on the same path, for browser terminals: output as binary frames, input
//    as binary or text frames, `{"type":"resize","width":W,"height":H}` as a control message, and
//    `{"type":"exit","exit_code":N}` before the close when the process ends.
import { type IncomingMessage } from 'node:http';
import { type Duplex } from 'node:stream';
import { type RawData, type WebSocket } from 'ws';
import { ApiError } from '../../http/errors.ts';
import { type UpgradeTable } from '../../http/ws.ts';
import { ENGINE_UNREACHABLE_MESSAGE, EngineUnavailableError } from '../../runtime/runtime.ts';
import { type Logger } from '../../shared/logger.ts';
import { type Attacher, type TerminalClient } from './attach-session.ts';
import { ATTACH_PREFIX } from './attach-url.ts';
import { resizeSchema } from './one-off.schemas.ts';
import { type OneOffService } from './one-off.service.ts';

// The Go CLI reads the response through a bufio.Reader it then drops, and reads the raw conn after:
// output sent in the same TCP read as the headers would be lost (docs/research/clients-runtime.md
// §1.4). Output waits until the client sends its first byte, or this long after the headers.
const HEADER_GAP_MS = 150;

/** The attach token of `/attach/<token>` (no sub-path: those are HTTP routes). */
function tokenOf(path: string): string | null {
  if (!path.startsWith(ATTACH_PREFIX)) return null;
  const token = path.slice(ATTACH_PREFIX.length);
  return token && !token.includes('/') ? token : null;
}

export function createAttachServer(deps: {
  oneOff: OneOffService;
  attacher: Attacher;
  upgrades: UpgradeTable;
  logger: Logger;
}) {
  const { oneOff, attacher, upgrades, logger } = deps;
  const refuse = (socket: Duplex, err: unknown) => {
    if (err instanceof ApiError) return upgrades.reject(socket, err.status, err.body, err.headers);
    if (err instanceof EngineUnavailableError)
      return upgrades.reject(socket, 503, { error: ENGINE_UNREACHABLE_MESSAGE });
    logger.error({ err }, 'one-off: attaching failed');
    upgrades.reject(socket, 500, { error: 'internal error while attaching to the one-off container' });
  };

  function connectClient(socket: Duplex, head: Buffer): TerminalClient {
    socket.write('HTTP/1.1 200 OK\r\n\r\n');
    let open = false;
    const pending: Buffer[] = [];
    const release = () => {
      if (open) return;
      open = true;
      for (const b of pending.splice(0)) socket.write(b);
    };
    const timer = setTimeout(release, HEADER_GAP_MS);
    return {
      send: (b) => (open ? socket.writable && socket.write(b) : pending.push(b)),
      end: () => {
        clearTimeout(timer);
        release();
        socket.end();
      },
      onInput: (listener) => {
        if (head.length) listener(head);
        socket.on('data', (b: Buffer) => {
          release();
          listener(b);
        });
      },
      onClose: (listener) => {
        // The API server's sockets allow half-open connections: a client's FIN alone is its going away.
        socket.once('end', () => socket.destroy());
        socket.on('close', listener);
      },
    };
  }

  function wsClient(ws: WebSocket, onResize: (w: number, h: number) => void): TerminalClient {
    const isOpen = () => ws.readyState === ws.OPEN;
    return {
      send: (b) => isOpen() && ws.send(b, { binary: true }),
      end: ({ exitCode, reason, idle }) => {
        if (!isOpen()) return;
        if (exitCode !== undefined) ws.send(JSON.stringify({ type: 'exit', exit_code: exitCode }));
        // 4408: closed for inactivity (as the CLI's 408 from /wait); 1000: the process ended.
        ws.close(idle ? 4408 : 1000, (reason ?? 'the process ended').slice(0, 120));
      },
      onInput: (listener) =>
        void ws.on('message', (data: RawData, isBinary: boolean) => {
          const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
          if (!isBinary) {
            const ctl = control(buf);
            if (ctl === 'invalid') return;
            if (ctl) return onResize(ctl.width, ctl.height);
          }
          listener(buf);
        }),
      onClose: (listener) => void ws.on('close', listener),
    };
  }

  // WebSocket attach: refusals (bad token, already attached…) are answered before the handshake.
  upgrades.register(ATTACH_PREFIX, async (req, socket, head, url) => {
    const token = tokenOf(url.pathname);
    if (!token) throw ApiError.notFound('container', 'not an attach URL');
    const s = oneOff.byToken(token, 'attach');
    await attacher.connect(s, async () => {
      const ws = await upgrades.accept(req, socket, head);
      return wsClient(ws, (w, h) => void (w > 0 && h > 0 && oneOff.resize(s, w, h)));
    });
  });

  return {
    /** The API server's 'connect' listener (CONNECT requests never reach Hono). */
    async handleConnect(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
      socket.on('error', () => socket.destroy());
      (socket as Duplex & { setNoDelay?: (v: boolean) => void }).setNoDelay?.(true);
      try {
        const token = tokenOf(new URL(req.url ?? '/', 'http://localhost').pathname);
        if (!token) throw ApiError.notFound('route', `CONNECT is only served on attach URLs (${ATTACH_PREFIX}…)`);
        const s = oneOff.byToken(token, 'attach');
        await attacher.connect(s, () => connectClient(socket, head));
      } catch (err) {
        refuse(socket, err);
      }
    },
  };
}

/**
 * `{"type":"resize","width":..,"height":..}` in a text frame (a malformed one is dropped, not
 * typed into the terminal); anything else is terminal input.
 */
function control(buf: Buffer): { width: number; height: number } | 'invalid' | null {
  if (buf[0] !== 0x7b) return null; // '{'
  let msg: { type?: unknown };
  try {
    msg = JSON.parse(buf.toString('utf8')) as { type?: unknown };
  } catch {
    return null;
  }
  if (msg?.type !== 'resize') return null;
  const r = resizeSchema().safeParse(msg);
  return r.success ? r.data : 'invalid';
}

export type AttachServer = ReturnType<typeof createAttachServer>;
