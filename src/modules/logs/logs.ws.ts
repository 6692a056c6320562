// `GET <logs_url>&stream=true` with `Upgrade: websocket` (the official Go CLI's `logs -f`):
// checked like the text request, then 101 and events `{event:"log"…}` / `{event:"ping"…}`.
import { type WebSocket } from 'ws';
import { ApiError } from '../../http/errors.ts';
import { type UpgradeTable } from '../../http/ws.ts';
import { type StreamSink } from './logs.hub.ts';
import { type LogsService } from './logs.service.ts';

const PATH = /^\/apps\/([^/]+)\/logs\/?$/;

/** Bytes queued in a socket beyond which a client counts as too slow (the hub's line bound also applies). */
const MAX_BUFFERED = 8 * 1024 * 1024;

export function registerLogsWebSocket(table: UpgradeTable, service: LogsService): void {
  table.register('/apps/', async (req, socket, head, url) => {
    const m = PATH.exec(url.pathname);
    if (!m) return false;
    const q = Object.fromEntries(url.searchParams);
    const read = service.authorize(decodeURIComponent(m[1]), q);
    if (!read.stream) throw ApiError.badRequest('a WebSocket needs stream=true');
    const ws = await table.accept(req, socket, head);
    const sub = service.subscribe(read, wsSink(ws));
    ws.on('close', () => sub.close('client closed'));
    ws.on('error', () => sub.close('socket error'));
    // The client sends nothing meaningful; a message is ignored (the CLI has no ping of its own).
  });
}

function wsSink(ws: WebSocket): StreamSink {
  return {
    send(message) {
      if (ws.readyState !== ws.OPEN) return Promise.reject(new Error('closed'));
      if (ws.bufferedAmount > MAX_BUFFERED) {
        ws.terminate();
        return Promise.reject(new Error('too slow'));
      }
      return new Promise((resolve, reject) => ws.send(message, (err) => (err ? reject(err) : resolve())));
    },
    close(reason) {
      if (ws.readyState === ws.OPEN) ws.close(reason === 'client closed' ? 1000 : 1001, reason.slice(0, 120));
      else ws.terminate();
    },
  };
}
