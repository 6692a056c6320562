// Upgrade requests (WebSocket): the same routing as any request, then the two sockets are piped both
// ways. The platform applies its inactivity timeout to these too (apps ping to keep them open).
import { type IncomingMessage, request, STATUS_CODES } from 'node:http';
import { type Socket } from 'node:net';
import { type Duplex } from 'node:stream';
import {
  addSetCookie,
  type ClientInfo,
  clientResponseHeaders,
  LOOPBACK,
  rawHead,
  UpstreamTimeout,
  upstreamRequestHeaders,
} from './forward.ts';
import { errorPage, sendRawPage } from './pages.ts';
import { type Upstream } from './types.ts';

/** An established tunnel, destroyed when the router closes. */
export interface Tunnel {
  destroy(): void;
}

export interface UpgradeContext {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  info: ClientInfo;
  nowMs: number;
  candidates: Upstream[];
  timeoutMs: number;
  tunnels: Set<Tunnel>;
  stickyCookie(up: Upstream): string | null;
  /** Called once, when the exchange is over (a tunnel: when it closes, with status 101). */
  done(status: number, container: string | null, bytes: number): void;
}

export function proxyUpgrade(ctx: UpgradeContext, i = 0): void {
  const { req, socket } = ctx;
  const up = ctx.candidates[i];
  let settled = false;
  const upReq = request({
    host: up.host ?? LOOPBACK,
    port: up.port,
    method: req.method,
    path: req.url,
    headers: upstreamRequestHeaders(req, ctx.info, ctx.nowMs, true),
    agent: false,
    setHost: false,
  });
  upReq.setTimeout(ctx.timeoutMs, () => upReq.destroy(new UpstreamTimeout('upstream timeout')));
  const onClientGone = () => upReq.destroy();
  socket.once('close', onClientGone);

  upReq.on('upgrade', (upRes, upSocket: Socket, upHead: Buffer) => {
    settled = true;
    socket.off('close', onClientGone);
    upSocket.setTimeout(0);
    if (!socket.writable) {
      upSocket.destroy();
      return ctx.done(499, up.containerName, 0);
    }
    const headers = {
      ...clientResponseHeaders(upRes.headers),
      connection: 'Upgrade',
      upgrade: upRes.headers.upgrade,
      'x-request-id': ctx.info.requestId,
    };
    const cookie = ctx.stickyCookie(up);
    if (cookie) addSetCookie(headers, cookie);
    socket.write(rawHead(upRes.statusCode ?? 101, upRes.statusMessage || 'Switching Protocols', headers));
    let bytes = upHead.length;
    if (upHead.length) socket.write(upHead);
    if (ctx.head.length) upSocket.write(ctx.head);
    upSocket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    // pipe() ends the other side when one ends (a graceful close); errors destroy both.
    upSocket.pipe(socket);
    socket.pipe(upSocket);
    const tunnel: Tunnel = {
      destroy() {
        socket.destroy();
        upSocket.destroy();
      },
    };
    ctx.tunnels.add(tunnel);
    (socket as Socket).setTimeout(ctx.timeoutMs, () => tunnel.destroy());
    let open = 2;
    const closed = (other: Duplex) => () => {
      other.end();
      // A peer that never closes its half must not keep the tunnel forever.
      setTimeout(() => other.destroy(), 5_000).unref();
      if (--open === 0) {
        ctx.tunnels.delete(tunnel);
        ctx.done(101, up.containerName, bytes);
      }
    };
    socket.once('close', closed(upSocket));
    upSocket.once('close', closed(socket));
    socket.on('error', () => tunnel.destroy());
    upSocket.on('error', () => tunnel.destroy());
  });

  // The container answered without upgrading (e.g. 400, 404): pass that answer on and close.
  upReq.on('response', (upRes) => {
    settled = true;
    socket.off('close', onClientGone);
    const status = upRes.statusCode ?? 502;
    const headers = {
      ...clientResponseHeaders(upRes.headers),
      connection: 'close',
      'x-request-id': ctx.info.requestId,
    };
    socket.write(rawHead(status, upRes.statusMessage || STATUS_CODES[status] || '', headers));
    let bytes = 0;
    upRes.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    upRes.once('close', () => ctx.done(status, up.containerName, bytes));
    upRes.pipe(socket);
  });

  upReq.on('error', (err) => {
    if (settled) return;
    socket.off('close', onClientGone);
    if (socket.destroyed) return ctx.done(499, null, 0);
    const timedOut = err instanceof UpstreamTimeout;
    // An upgrade is a GET without a body: safe to try the next container.
    if (!timedOut && i + 1 < ctx.candidates.length) return proxyUpgrade(ctx, i + 1);
    const page = timedOut
      ? errorPage(504, `${up.containerName} did not answer within ${ctx.timeoutMs / 1000} s.`)
      : errorPage(502, `${up.containerName} closed the connection or refused it.`);
    ctx.done(page.status, up.containerName, sendRawPage(socket, page, { 'x-request-id': ctx.info.requestId }));
  });

  upReq.end();
}
