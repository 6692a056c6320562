// The app's logs followed as the API serves them (a signed logs URL, Server-Sent Events), each line
// handed on with its container's name. Reconnects while `up` runs (a restarted emulator, a cut socket).
import { type ApiClient } from './api-client.ts';
import { splitLogLine } from './log-printer.ts';

export function followLogs(
  api: ApiClient,
  app: string,
  onLine: (container: string, text: string) => void,
): { close(): void } {
  const ac = new AbortController();
  let closed = false;
  const run = async () => {
    while (!closed) {
      try {
        const { logs_url: url } = await api.get<{ logs_url: string }>(`/v1/apps/${app}/logs`);
        const res = await fetch(`${url}&stream=true&n=0`, {
          signal: ac.signal,
          headers: { accept: 'text/event-stream' },
        });
        if (!res.ok || !res.body) throw new Error(`logs answered ${res.status}`);
        let buffer = '';
        for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
          buffer += chunk;
          let nl = buffer.indexOf('\n');
          while (nl >= 0) {
            const line = buffer.slice(0, nl).replace(/\r$/, '');
            buffer = buffer.slice(nl + 1);
            if (line.startsWith('data:')) deliver(line.slice(5).trim());
            nl = buffer.indexOf('\n');
          }
          // One event is bounded by the server; a stream sending no newline is cut.
          if (buffer.length > 4 * 1024 * 1024) throw new Error('log event too large');
        }
      } catch {
        // Retried below unless closed.
      }
      if (!closed) await new Promise((ok) => setTimeout(ok, 1000));
    }
  };
  const deliver = (data: string) => {
    let event: { event?: string; log?: string };
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    if (event.event !== 'log' || typeof event.log !== 'string') return;
    for (const l of event.log.split('\n')) {
      if (!l) continue;
      const parts = splitLogLine(l);
      if (parts) onLine(parts.container, parts.text);
    }
  };
  void run();
  return {
    close() {
      closed = true;
      ac.abort();
    },
  };
}
