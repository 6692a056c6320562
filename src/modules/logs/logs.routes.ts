import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { type AppViewContext, appJson } from '../apps/apps.view.ts';
import { archivesQuery, logsArchiveList, logsUrlAnswer, signedArchiveQuery, signedLogsQuery } from './logs.schemas.ts';
import { type LogsService } from './logs.service.ts';

/**
 * #20 logs URL, #21 archives list (API, authenticated), and the logs service itself on the same
 * port (#22 text and SSE, archive downloads): those are outside /v1, their signed URL is the credential.
 */
export function logsRoutes(deps: { logs: LogsService; view: AppViewContext }) {
  const { logs } = deps;
  const r = new ApiRoutes('logs');
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/logs',
      summary: '#20 Get a signed logs URL',
      responses: { 200: logsUrlAnswer },
    },
    (c) => {
      const { app, logs_url } = logs.logsUrl(user(c), c.get('app').id);
      return c.json({ app: appJson(app, deps.view), logs_url });
    },
  );

  // `cursor` (documentation, npm client) or `page` (Go CLI)
  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/logs_archives',
      summary: '#21 List the logs archives',
      query: archivesQuery,
      responses: { 200: logsArchiveList },
    },
    (c, { query }) => c.json(logs.archives(user(c), c.get('app').id, { cursor: query.cursor, page: query.page })),
  );

  // Text, or SSE when stream=true without an Upgrade header (WebSocket: logs.ws.ts)
  r.add(
    {
      method: 'get',
      path: '/apps/:app/logs',
      summary: '#22 Read the logs (signed URL from #20): the last lines as text, or followed as Server-Sent Events',
      auth: 'signed',
      app: false,
      query: signedLogsQuery,
      responses: {
        200: {
          contentType: ['text/plain', 'text/event-stream'],
          description: 'One line per log line; with stream=true, one data-only event per message',
        },
        204: null,
      },
    },
    (c, { params, query }) => {
      const read = logs.authorize(params.app, query);
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
    },
  );

  // Archive download (URL from #21)
  r.add(
    {
      method: 'get',
      path: '/apps/:app/logs_archives/:id',
      summary: 'Download a logs archive (signed URL from #21)',
      auth: 'signed',
      app: false,
      query: signedArchiveQuery,
      responses: { 200: { contentType: 'application/gzip', description: 'The archived lines, gzipped' } },
    },
    (c, { params, query }) => {
      const file = logs.archiveFile(params.app, params.id, query);
      const body = Readable.toWeb(createReadStream(file.path)) as ReadableStream;
      return c.body(body, 200, {
        'content-type': 'application/gzip',
        'content-length': String(file.size),
        'content-disposition': `attachment; filename="${file.name}"`,
      });
    },
  );

  return r;
}
