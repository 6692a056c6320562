// Clients of the logs service as the official ones use it: the logs_url from #20, text GETs,
// a WebSocket (Go CLI `logs -f`) and server-sent events.
import { WebSocket } from 'ws';
import { type Harness } from '../harness.ts';

export async function createApp(h: Harness, name: string): Promise<{ id: string; name: string }> {
  const r = await h.call('POST', '/v1/apps', { body: { app: { name } } });
  if (r.status !== 201) throw new Error(`create app: ${r.status} ${r.text}`);
  return r.body.app;
}

export async function logsUrl(h: Harness, app: string): Promise<string> {
  const r = await h.call('GET', `/v1/apps/${app}/logs`);
  if (r.status !== 200) throw new Error(`logs url: ${r.status} ${r.text}`);
  return r.body.logs_url as string;
}

/** GET <logs_url>&n=…&filter=… → status and lines (the Go client rebuilds the URL the same way). */
export async function readLogs(
  url: string,
  params: Record<string, string | number> = {},
): Promise<{ status: number; lines: string[]; text: string; type: string | null }> {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, String(v));
  const res = await fetch(u, { headers: { accept: 'application/json' } });
  const text = await res.text();
  return {
    status: res.status,
    text,
    type: res.headers.get('content-type'),
    lines: text ? text.replace(/\n$/, '').split('\n') : [],
  };
}

/** The message part of a formatted line (after `[container] `). */
export const messageOf = (line: string) => line.split(' ').slice(5).join(' ');
export const containerOf = (line: string) => line.split(' ')[4].slice(1, -1);

export interface StreamClient {
  /** Every log line received so far (events split on \n). */
  lines: string[];
  pings: number;
  events: Record<string, unknown>[];
  closed: boolean;
  close(): void;
}

function collect(): StreamClient & { take(raw: string): void } {
  const c = {
    lines: [] as string[],
    pings: 0,
    events: [] as Record<string, unknown>[],
    closed: false,
    close: () => undefined,
    take(raw: string) {
      const e = JSON.parse(raw) as { event: string; log?: string };
      c.events.push(e);
      if (e.event === 'ping') c.pings++;
      if (e.event === 'log') c.lines.push(...e.log!.split('\n').filter(Boolean));
    },
  };
  return c;
}

/** `logs -f`: ws(s) scheme, `&stream=true` string-appended like the Go CLI, extra params after. */
export function openWs(url: string, extra = ''): Promise<StreamClient & { ws: WebSocket }> {
  const wsUrl = `${url.replace(/^http/, 'ws')}&stream=true${extra}`;
  const c = collect();
  const ws = new WebSocket(wsUrl, { headers: { Origin: 'http://scalingo-cli.local/1.0.0' } });
  ws.on('message', (m) => c.take(m.toString()));
  ws.on('close', () => (c.closed = true));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(Object.assign(c, { ws, close: () => ws.close() })));
    ws.once('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })),
    );
    ws.once('error', reject);
  });
}

/** `stream=true` without Upgrade: server-sent events, data-only JSON. */
export async function openSse(
  url: string,
  extra = '',
): Promise<StreamClient & { status: number; type: string | null }> {
  const ctrl = new AbortController();
  const res = await fetch(`${url}&stream=true${extra}`, { signal: ctrl.signal });
  const c = collect();
  const out = Object.assign(c, {
    status: res.status,
    type: res.headers.get('content-type'),
    close: () => ctrl.abort(),
  });
  if (!res.ok || !res.body) return out;
  void (async () => {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          if (data) c.take(data);
        }
      }
    } catch {
      // aborted
    }
    c.closed = true;
  })();
  return out;
}
