import WebSocket from 'ws';
import { sleep } from './stats.ts';

const INSPECT_LINE = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/\S+)/;

/**
 * One call of the inspector protocol to a child started with --inspect=127.0.0.1:0 (its URL read
 * from the child's stderr): a full GC, or process.memoryUsage() evaluated inside it, without
 * changing the server's code.
 */
async function inspectorCall(
  stderr: () => string,
  method: string,
  params: Record<string, unknown> = {},
  timeoutMs = 10_000,
): Promise<unknown> {
  const deadline = performance.now() + timeoutMs;
  let url = INSPECT_LINE.exec(stderr())?.[1];
  while (!url) {
    if (performance.now() > deadline)
      throw new Error(`no inspector URL on the child's stderr: ${stderr().slice(0, 300)}`);
    await sleep(50);
    url = INSPECT_LINE.exec(stderr())?.[1];
  }
  const ws = new WebSocket(url);
  try {
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok());
      ws.once('error', fail);
    });
    return await new Promise<unknown>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`${method}: no answer`)), timeoutMs);
      ws.on('message', (data) => {
        const msg = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
        if (msg.id !== 1) return;
        clearTimeout(timer);
        if (msg.error) fail(new Error(`${method}: ${msg.error.message}`));
        else ok(msg.result);
      });
      ws.send(JSON.stringify({ id: 1, method, params }));
    });
  } finally {
    ws.close();
  }
}

/** A full garbage collection (HeapProfiler.collectGarbage): what stays afterwards is reachable. */
export async function collectGarbage(stderr: () => string): Promise<void> {
  await inspectorCall(stderr, 'HeapProfiler.collectGarbage');
}

/** process.memoryUsage() of the child, in MiB: where its RSS goes (JS heap, external buffers, the rest is code and native). */
export async function memoryUsage(
  stderr: () => string,
): Promise<{ rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number }> {
  const r = (await inspectorCall(stderr, 'Runtime.evaluate', {
    expression: 'JSON.stringify(process.memoryUsage())',
    returnByValue: true,
  })) as { result: { value: string } };
  const m = JSON.parse(r.result.value) as Record<string, number>;
  const out = {} as Record<string, number>;
  for (const [k, v] of Object.entries(m)) out[k] = v / 2 ** 20;
  return out as never;
}
