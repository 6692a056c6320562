// `scalingo logs --addon <id> -f`: the CLI opens the addon's logs URL with `stream=true` as a
// WebSocket (cli logs.Stream), like an app's. Checked like the text request, then 101 and the same
// `{event:"log"…}` events as app logs (logs.hub.ts), one per line of the addon server's output.
import { type WebSocket } from 'ws';
import { type UpgradeTable } from '../../http/ws.ts';
import { formattedLine } from '../logs/log-line.ts';
import { logEvent } from '../logs/logs.hub.ts';
import { type UrlSigner } from '../logs/logs-url.ts';
import { type AddonServers } from './addon-servers.ts';
import { checkAddonLogsUrl } from './database-features.routes.ts';

const PATH = /^\/_emulator\/addon-logs\/([^/]+)\/?$/;
/** Bytes queued in a socket beyond which the client counts as too slow and is dropped. */
const MAX_BUFFERED = 8 * 1024 * 1024;
/** A follower is closed after this long (the CLI reconnects by running the command again). */
const MAX_FOLLOW_MS = 6 * 60 * 60_000;

/** Registers the handler; returns what closes every follower (the emulator's stop must not wait on them). */
export function registerAddonLogsWebSocket(
  table: UpgradeTable,
  deps: { signer: UrlSigner; servers: AddonServers },
): { closeAll(): void } {
  const open = new Set<WebSocket>();
  table.register('/_emulator/addon-logs/', async (req, socket, head, url) => {
    const m = PATH.exec(url.pathname);
    if (!m) return false;
    const id = checkAddonLogsUrl(
      deps.signer,
      deps.servers,
      decodeURIComponent(m[1]),
      Object.fromEntries(url.searchParams),
    );
    const ws: WebSocket = await table.accept(req, socket, head);
    const send = (text: string) => {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > MAX_BUFFERED) return void ws.terminate();
      ws.send(text, () => undefined);
    };
    const unsubscribe = deps.servers.logs.subscribe(id, (l) =>
      send(logEvent(`${formattedLine(l)}\n`, new Date(l.time_ms).toISOString())),
    );
    const timer = setTimeout(() => ws.close(1001, 'time limit of a follower reached'), MAX_FOLLOW_MS);
    open.add(ws);
    const end = () => {
      open.delete(ws);
      clearTimeout(timer);
      unsubscribe();
    };
    ws.on('close', end);
    ws.on('error', end);
  });
  return {
    closeAll() {
      for (const ws of open) ws.terminate();
      open.clear();
    },
  };
}
