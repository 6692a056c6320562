import WebSocket from 'ws';
import { sleep } from './stats.ts';

const INSPECT_LINE = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/\S+)/;

/**
 * A full garbage collection in a child started with --inspect=127.0.0.1:0, through the inspector
 * protocol (HeapProfiler.collectGarbage): tells memory still reachable apart from garbage not yet
 * collected, without changing the server's code.
 */
export async function collectGarbage(stderr: () => string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let url: string | undefined;
  while (!(url = INSPECT_LINE.exec(stderr())?.[1])) {
    if (performance.now() > deadline) throw new Error(`no inspector URL on the child's stderr: ${stderr().slice(0, 300)}`);
    await sleep(50);
  }
  const ws = new WebSocket(url);
  try {
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok());
      ws.once('error', fail);
    });
    await new Promise<void>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error('HeapProfiler.collectGarbage: no answer')), timeoutMs);
      ws.on('message', (data) => {
        const msg = JSON.parse(String(data)) as { id?: number; error?: { message: string } };
        if (msg.id !== 1) return;
        clearTimeout(timer);
        if (msg.error) fail(new Error(msg.error.message));
        else ok();
      });
      ws.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    });
  } finally {
    ws.close();
  }
}
