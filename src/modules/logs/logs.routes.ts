import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { AppEnv } from '../../http/env.ts';
import { appJson, type AppViewContext } from '../apps/apps.view.ts';
import type { LogsService } from './logs.service.ts';

/**
 * #20 logs URL, #21 archives list (API, authenticated), and the logs service itself on the same
 * port (#22 text and SSE, archive downloads): those are outside /v1, their signed URL is the credential.
 */
export function logsRoutes(deps: { logs: LogsService; view: AppViewContext }) {
  const { logs } = deps;
  const r = new Hono<AppEnv>();
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  // #20
  r.get('/v1/apps/:app/logs', (c) => {
    const { app, logs_url } = logs.logsUrl(user(c), c.req.param('app'));
    return c.json({ app: appJson(app, deps.view), logs_url });
  });

  // #21 — `cursor` (documentation, npm client) or `page` (Go CLI)
  r.get('/v1/apps/:app/logs_archives', (c) => c.json(logs.archives(user(c), c.req.param('app'), { cursor: c.req.query('cursor'), page: c.req.query('page') })));

  // #22 text, or SSE when stream=true without an Upgrade header (WebSocket: logs.ws.ts)
  r.get('/apps/:app/logs', (c) => {
    const read = logs.authorize(c.req.param('app'), c.req.query());
    if (!read.stream) {
      const text = logs.text(read);
      // The Go CLI prints "There is no log for this application" on 204 (research §2.2).
      if (text === null) return c.body(null, 204);
      return c.body(text, 200, { 'content-type': 'text/plain; charset=utf-8' });
    }
    return streamSSE(c, async (stream) => {
      const sub = logs.subscribe(read, {
        // Data-only events: EventSource's onmessage sees them all; the JSON says which kind it is.
        send: (message) => stream.writeSSE({ data: message }),
        close: () => void stream.close(),
      });
      stream.onAbort(() => sub.close('client closed'));
      await sub.closed;
    });
  });

  // Archive download (URL from #21)
  r.get('/apps/:app/logs_archives/:id', (c) => {
    const file = logs.archiveFile(c.req.param('app'), c.req.param('id'), c.req.query());
    const body = Readable.toWeb(createReadStream(file.path)) as ReadableStream;
    return c.body(body, 200, {
      'content-type': 'application/gzip',
      'content-length': String(file.size),
      'content-disposition': `attachment; filename="${file.name}"`,
    });
  });

  return r;
}
