// The router's own answers (unknown app, no web container, redirects, gateway errors): small HTML
// pages, plus the platform's X-Scalingo-Error header that says what went wrong on the router side.
import { type OutgoingHttpHeaders, type ServerResponse, STATUS_CODES } from 'node:http';
import { type Duplex } from 'node:stream';
import { rawHead } from './forward.ts';

export interface Page {
  status: number;
  headers: OutgoingHttpHeaders;
  body: string;
}

export function errorPage(status: number, message: string): Page {
  const title = `${status} ${STATUS_CODES[status] ?? ''}`.trim();
  const body = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>${title}</title></head>
<body><h1>${title}</h1><p>${escapeHtml(message)}</p><hr><p><small>Scalingo emulator router</small></p></body></html>
`;
  return {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-scalingo-error': message.replace(/[^\x20-\x7e]/g, '?'),
    },
    body,
  };
}

/** Force HTTPS: a permanent redirect to the same URL over https. */
export function redirectPage(location: string): Page {
  const body = `<!DOCTYPE html>
<html><head><title>301 Moved Permanently</title></head>
<body><h1>301 Moved Permanently</h1><p><a href="${escapeHtml(location)}">${escapeHtml(location)}</a></p></body></html>
`;
  return { status: 301, headers: { 'content-type': 'text/html; charset=utf-8', location }, body };
}

/** Writes a page on a normal response; returns the body size for the access log. */
export function sendPage(res: ServerResponse, page: Page): number {
  const body = Buffer.from(page.body);
  res.writeHead(page.status, { ...page.headers, 'content-length': body.length });
  res.end(res.req.method === 'HEAD' ? undefined : body);
  return res.req.method === 'HEAD' ? 0 : body.length;
}

/** Same on a socket that asked for an upgrade (no ServerResponse there); the connection is closed after. */
export function sendRawPage(socket: Duplex, page: Page, extra: OutgoingHttpHeaders = {}): number {
  const body = Buffer.from(page.body);
  const head = rawHead(page.status, STATUS_CODES[page.status] ?? '', {
    ...page.headers,
    ...extra,
    'content-length': body.length,
    connection: 'close',
  });
  if (socket.writable) socket.end(Buffer.concat([Buffer.from(head), body]));
  else socket.destroy();
  return body.length;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
