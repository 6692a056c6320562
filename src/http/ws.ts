// WebSocket upgrades on the API port. Node hands `Upgrade:` requests to the server's 'upgrade'
// event, not to Hono, so areas register here by path prefix (logs stream, deployment stream,
// one-off attach…). emulator.ts wires `handle` to the server once.
import { type IncomingMessage } from 'node:http';
import { type Duplex } from 'node:stream';
import { type WebSocket, type WebSocketServer } from 'ws';
import { type Logger } from '../shared/logger.ts';
import { ApiError } from './errors.ts';

/**
 * Handles an upgrade whose path starts with its prefix. Return false to pass it to the next
 * matching handler. Throwing an ApiError answers with its status and body; anything else is a 500.
 */
export type UpgradeHandler = (
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  url: URL,
) => boolean | void | Promise<boolean | void>;

/** Largest message a client may send (terminal input, control messages): ws's default is 100 MiB. */
export const WS_MAX_PAYLOAD = 1024 * 1024;

export function createUpgradeTable(deps: { logger: Logger }) {
  const entries: { prefix: string; handler: UpgradeHandler }[] = [];
  // One server per message bound (a socket that has not authenticated yet gets a small one).
  const servers = new Map<number, WebSocketServer>();
  // ws is loaded at the first upgrade: an emulator nobody follows logs or attaches to never loads it.
  const serverFor = async (maxPayload: number) => {
    let wss = servers.get(maxPayload);
    if (!wss) {
      const { WebSocketServer } = await import('ws');
      wss = servers.get(maxPayload) ?? new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload });
      servers.set(maxPayload, wss);
    }
    return wss;
  };

  /** Writes a plain HTTP answer on the raw socket and closes it (refused upgrade). */
  function reject(
    socket: Duplex,
    status: number,
    body: Record<string, unknown> | string,
    headers: Record<string, string> = {},
  ): void {
    if (!socket.writable) return void socket.destroy();
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const type = typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: ${type}\r\nContent-Length: ` +
        `${Buffer.byteLength(text)}\r\nConnection: close\r\n${extra}\r\n${text}`,
    );
  }

  return {
    /** Registers a handler; longer prefixes are tried first. */
    register(prefix: string, handler: UpgradeHandler): void {
      entries.push({ prefix, handler });
      entries.sort((a, b) => b.prefix.length - a.prefix.length);
    },

    /**
     * Completes the WebSocket handshake (101) for a request a handler accepted. Every socket gets an
     * 'error' listener here: a malformed frame (RSV bits, unmasked, invalid UTF-8, too long) makes ws
     * emit 'error' and close that socket with 1002/1007/1009 — without a listener the process would die.
     */
    async accept(
      req: IncomingMessage,
      socket: Duplex,
      head: Buffer,
      opts: { maxPayload?: number } = {},
    ): Promise<WebSocket> {
      const wss = await serverFor(opts.maxPayload ?? WS_MAX_PAYLOAD);
      return new Promise((resolve) =>
        wss.handleUpgrade(req, socket, head, (ws) => {
          ws.on('error', (err) =>
            deps.logger.debug(
              { err: err.message, path: (req.url ?? '').split('?')[0].replace(/^\/attach\/[^/]+/, '/attach/<token>') },
              'websocket closed on a protocol error',
            ),
          );
          resolve(ws);
        }),
      );
    },

    reject,

    /** The server's 'upgrade' listener. */
    async handle(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
      socket.on('error', () => socket.destroy());
      const url = new URL(req.url ?? '/', 'http://localhost');
      try {
        if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket')
          throw ApiError.badRequest('only WebSocket upgrades are served');
        for (const e of entries) {
          if (!url.pathname.startsWith(e.prefix)) continue;
          if ((await e.handler(req, socket, head, url)) !== false) return;
        }
        throw ApiError.notFound('route', `no WebSocket route matches ${url.pathname}`);
      } catch (err) {
        if (err instanceof ApiError) return reject(socket, err.status, err.body, err.headers);
        deps.logger.error({ err, path: url.pathname }, 'websocket upgrade failed');
        reject(socket, 500, { error: 'internal error during the WebSocket upgrade' });
      }
    },

    /** Closes every open WebSocket (emulator stop). */
    closeAll(): void {
      for (const wss of servers.values()) for (const ws of wss.clients) ws.terminate();
    },
  };
}

export type UpgradeTable = ReturnType<typeof createUpgradeTable>;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
