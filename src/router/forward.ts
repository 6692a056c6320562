// Header work of the proxy: which app a Host names, who the client is, and the headers each side
// sees. The forwarded headers are the platform's (https://doc.scalingo.com/platform/internals/routing):
// X-Forwarded-For, X-Real-Ip, X-Forwarded-Proto, X-Forwarded-Port, X-Request-ID, X-Request-Start.
import { randomUUID } from 'node:crypto';
import { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';

/** The only address the router ever connects to: containers are reached through ports published on it. */
export const LOOPBACK = '127.0.0.1';

export class UpstreamTimeout extends Error {}

// Meaningful for one connection only (RFC 9110 §7.6.1): never passed through.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

const APP_HOST = /^([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)\.localhost\.?$/;

/** The Host header without its port, lower case, without a trailing dot; null when absent or malformed. */
export function bareHostname(host: string | undefined): string | null {
  if (!host) return null;
  const bare = host.trim().toLowerCase().replace(/:\d*$/, '').replace(/\.$/, '');
  return bare.length > 0 && bare.length <= 253 && /^[a-z0-9.-]+$/.test(bare) ? bare : null;
}

/** `<app>.localhost[:port]` → `<app>`; anything else → null. */
export function appNameFromHost(host: string | undefined): string | null {
  if (!host) return null;
  const bare = host.trim().toLowerCase().replace(/:\d*$/, '');
  return APP_HOST.exec(bare)?.[1] ?? null;
}

export interface ClientInfo {
  ip: string;
  /** The router speaks plain HTTP; a TLS terminator in front of it (or a test) says https through X-Forwarded-Proto. */
  proto: 'http' | 'https';
  requestId: string;
  host: string;
}

// The platform keeps a client's X-Request-ID ("will be set if not existing"); an unreasonable one is replaced.
const REQUEST_ID = /^[\w.:@+=/-]{1,200}$/;

export function clientInfo(req: IncomingMessage): ClientInfo {
  const given = first(req.headers['x-request-id']);
  return {
    ip: (req.socket.remoteAddress ?? '').replace(/^::ffff:/, ''),
    proto: first(req.headers['x-forwarded-proto'])?.split(',')[0].trim().toLowerCase() === 'https' ? 'https' : 'http',
    requestId: given && REQUEST_ID.test(given) ? given : randomUUID(),
    host: req.headers.host ?? '',
  };
}

export function hasBody(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (len !== undefined && len !== '0');
}

/** Headers sent to the container: the client's minus hop-by-hop ones, plus the forwarded ones. */
export function upstreamRequestHeaders(
  req: IncomingMessage,
  info: ClientInfo,
  nowMs: number,
  upgrade: boolean,
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = withoutHopByHop(req.headers);
  if (upgrade) {
    out.connection = 'Upgrade';
    out.upgrade = req.headers.upgrade;
  } else if (req.headers['transfer-encoding'] !== undefined && req.headers['content-length'] === undefined) {
    // A body of unknown length is streamed chunked to the container, whatever the method.
    out['transfer-encoding'] = 'chunked';
  }
  // The router already answered `Expect: 100-continue` itself (Node does), the body follows at once.
  delete out.expect;
  const prior = first(req.headers['x-forwarded-for']);
  out['x-forwarded-for'] = prior ? `${prior}, ${info.ip}` : info.ip;
  out['x-real-ip'] = info.ip;
  out['x-forwarded-proto'] = info.proto;
  // The platform's public ports are 80/443; the emulator's plain-HTTP port is the router's own.
  out['x-forwarded-port'] = info.proto === 'https' ? '443' : String(req.socket.localPort ?? '');
  out['x-forwarded-host'] = info.host;
  out['x-request-id'] = info.requestId;
  out['x-request-start'] = `t=${(nowMs / 1000).toFixed(3)}`;
  return out;
}

/** Headers sent back to the client: the container's minus hop-by-hop ones (Node frames the body itself). */
export function clientResponseHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return withoutHopByHop(headers);
}

function withoutHopByHop(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  // Headers named in Connection are hop-by-hop too.
  const listed = new Set(
    (first(headers.connection) ?? '')
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name)) continue;
    out[name] = value;
  }
  return out;
}

export function addSetCookie(headers: OutgoingHttpHeaders, cookie: string): void {
  const prior = headers['set-cookie'];
  headers['set-cookie'] =
    prior === undefined ? [cookie] : [...(Array.isArray(prior) ? prior : [String(prior)]), cookie];
}

/** `HTTP/1.1 <status> <reason>` + header lines, for answers written on a raw (upgrade) socket. */
export function rawHead(status: number, reason: string, headers: OutgoingHttpHeaders): string {
  let head = `HTTP/1.1 ${status} ${reason}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) head += `${name}: ${String(v).replace(/[\r\n]/g, '')}\r\n`;
  }
  return `${head}\r\n`;
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
