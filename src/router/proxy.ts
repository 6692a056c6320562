// The router: http://<app>.localhost:<routerPort> → the app's running web containers, reached only
// through the ports Docker publishes on 127.0.0.1. Round-robin or sticky (balancer.ts), Force HTTPS,
// router logs and per-request records for the router metrics. Platform behaviour and its sources:
// docs/fidelity.md, "Router".
import { Agent, createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type Duplex } from 'node:stream';
import { type Clock } from '../shared/clock.ts';
import { type Logger } from '../shared/logger.ts';
import { formatAccessLine } from './access-log.ts';
import { type Balancer, createBalancer } from './balancer.ts';
import {
  addSetCookie,
  appNameFromHost,
  bareHostname,
  type ClientInfo,
  clientInfo,
  clientResponseHeaders,
  hasBody,
  LOOPBACK,
  UpstreamTimeout,
  upstreamRequestHeaders,
} from './forward.ts';
import { errorPage, type Page, redirectPage, sendPage, sendRawPage } from './pages.ts';
import { type RouterRequestRecord, type RouteTarget } from './types.ts';
import { proxyUpgrade, type Tunnel } from './websocket.ts';

export type { RouterRequestRecord, RouteTarget, Upstream, UpstreamSource } from './types.ts';

export interface RouterDeps {
  /** The app a host names (`<app>.localhost`), or null when there is no such app. Called at every request. */
  resolve(appName: string): RouteTarget | null;
  /** The app a custom domain (bare hostname, no port) is linked to; tried when `<app>.localhost` names no app. */
  resolveHost?(hostname: string): RouteTarget | null;
  onRequest?(rec: RouterRequestRecord): void;
  /** Only for apps with router_logs on. `line` is the message: `method=GET path="/" …`. */
  onAccessLog?(appId: string, line: string, container: string | null): void;
  logger: Logger;
  clock: Clock;
  /** Connection, first-byte and inactivity timeout (platform: 30 s each, then 504). */
  timeoutMs?: number;
}

export interface Router {
  server: Server;
  /** Resolves with the bound port (port 0 picks a free one). */
  listen(port: number, host: string): Promise<number>;
  close(): Promise<void>;
}

/** The platform refuses bodies over 75 MB with 413. */
export const MAX_BODY_BYTES = 75 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 30_000;
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
const CLOSE_GRACE_MS = 2_000;

/** One request/response as reported once it is over. */
interface Exchange {
  req: IncomingMessage;
  info: ClientInfo;
  target: RouteTarget | null;
  time: number;
  started: number;
  container: string | null;
  bytes: number;
  reported: boolean;
}

export function createRouter(deps: RouterDeps): Router {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // Keep-alive to the containers; idle pooled sockets are dropped before common app keep-alive timeouts (5 s).
  const agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, timeout: 4_000, scheduling: 'lifo' });
  const balancer: Balancer = createBalancer();
  const tunnels = new Set<Tunnel>();
  const server = createServer({ maxHeaderSize: 32 * 1024 }, (req, res) => handle(req, res));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => upgrade(req, socket, head));

  function begin(req: IncomingMessage): Exchange {
    return {
      req,
      info: clientInfo(req),
      target: null,
      time: deps.clock.now(),
      started: performance.now(),
      container: null,
      bytes: 0,
      reported: false,
    };
  }

  function report(ex: Exchange, status: number): void {
    if (ex.reported || !ex.target) return;
    ex.reported = true;
    const { target, req, info } = ex;
    const rec: RouterRequestRecord = {
      appId: target.appId,
      appName: target.appName,
      time: ex.time,
      status,
      durationMs: performance.now() - ex.started,
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      container: ex.container,
      bytes: ex.bytes,
      clientIp: info.ip,
      userAgent: req.headers['user-agent'] ?? '',
      host: info.host,
      requestId: info.requestId,
    };
    // A failing listener must neither break the exchange nor silence the other listener.
    const safely = (fn: () => void) => {
      try {
        fn();
      } catch (err) {
        deps.logger.error({ err }, 'router: request listener failed');
      }
    };
    safely(() => deps.onRequest?.(rec));
    if (target.routerLogs) {
      const line = formatAccessLine({
        ...rec,
        from: rec.clientIp,
        protocol: info.proto,
        referer: req.headers.referer,
        userAgent: rec.userAgent,
      });
      safely(() => deps.onAccessLog?.(target.appId, line, rec.container));
    }
  }

  /** The checks every request goes through before a container is picked; a Page when the router answers itself. */
  function route(ex: Exchange): { page: Page } | { target: RouteTarget } {
    const name = appNameFromHost(ex.req.headers.host);
    const hostname = bareHostname(ex.req.headers.host);
    let target: RouteTarget | null;
    try {
      // `<app>.localhost` first (no domain lookup on the hot path), then custom domains.
      target = (name ? deps.resolve(name) : null) || (hostname ? (deps.resolveHost?.(hostname) ?? null) : null);
    } catch (err) {
      deps.logger.error({ err, app: name ?? hostname }, 'router: resolving the app failed');
      return { page: errorPage(500, 'The router could not look the application up.') };
    }
    if (!target && !name)
      return {
        page: errorPage(
          404,
          'No application here: address an app as http://<app>.localhost:<router port>/, or through one of its custom domains.',
        ),
      };
    if (!target)
      return { page: errorPage(404, `No such app: no application named "${name}" exists on this emulator.`) };
    ex.target = target;
    if (target.canonicalHost && hostname !== target.canonicalHost) {
      // Canonical domain: every other host of the app is redirected there, path and query kept.
      const port = target.forceHttps ? '' : (/:\d+$/.exec(ex.info.host)?.[0] ?? '');
      return {
        page: redirectPage(
          `${target.forceHttps ? 'https' : ex.info.proto}://${target.canonicalHost}${port}${ex.req.url ?? '/'}`,
        ),
      };
    }
    if (target.forceHttps && ex.info.proto !== 'https') {
      // Same host without the port: the platform serves HTTPS on 443.
      return { page: redirectPage(`https://${ex.info.host.replace(/:\d*$/, '')}${ex.req.url ?? '/'}`) };
    }
    if (Number(ex.req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
      const page = errorPage(413, 'The request body is larger than the 75 MB the router accepts.');
      page.headers.connection = 'close'; // rather than reading the whole body to throw it away
      return { page };
    }
    if (target.upstreams.length === 0)
      return { page: errorPage(503, `No web container is running for ${target.appName}.`) };
    return { target };
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const ex = begin(req);
    res.setHeader('x-request-id', ex.info.requestId);
    let upstreamBroke = false;
    res.once('close', () => report(ex, res.writableFinished || upstreamBroke ? res.statusCode : 499));
    const routed = route(ex);
    if ('page' in routed) {
      if (routed.page.headers.connection !== 'close') req.resume();
      ex.bytes = sendPage(res, routed.page);
      return;
    }
    const { target } = routed;
    if (target.forceHttps) res.setHeader('strict-transport-security', 'max-age=31536000');
    const candidates = balancer.order(target, req.headers.cookie);
    const body = hasBody(req);

    const attempt = (i: number): void => {
      const up = candidates[i];
      let sent = false;
      let responded = false;
      const upReq = request({
        host: up.host ?? LOOPBACK,
        port: up.port,
        method: req.method,
        path: req.url,
        headers: upstreamRequestHeaders(req, ex.info, ex.time, false),
        agent,
        setHost: false,
      });
      upReq.setTimeout(timeoutMs, () => upReq.destroy(new UpstreamTimeout('upstream timeout')));
      // The body starts flowing only once connected: a refused connection has consumed nothing, so any
      // request can go to the next container.
      const start = () => {
        sent = true;
        if (body) req.pipe(upReq);
        else upReq.end();
      };
      upReq.once('socket', (s: Socket) => (s.connecting ? s.once('connect', start) : start()));
      const onClientGone = () => {
        if (!res.writableFinished) upReq.destroy();
      };
      res.once('close', onClientGone);

      upReq.on('response', (upRes) => {
        responded = true;
        ex.container = up.containerName;
        const headers = clientResponseHeaders(upRes.headers);
        if (target.stickySession) addSetCookie(headers, balancer.stickyCookie(target, up, deps.clock.now()));
        try {
          res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, headers);
        } catch (err) {
          deps.logger.warn({ err, app: target.appName }, 'router: invalid response from the container');
          upRes.destroy();
          ex.bytes = sendPage(res, errorPage(502, 'The web container sent an invalid response.'));
          return;
        }
        upRes.on('data', (chunk: Buffer) => {
          ex.bytes += chunk.length;
        });
        upRes.on('error', () => {
          upstreamBroke = true;
          res.destroy();
        });
        upRes.pipe(res);
      });

      upReq.on('error', (err) => {
        if (responded) {
          upstreamBroke = true;
          res.destroy();
          return;
        }
        if (res.destroyed || res.writableEnded) return; // the client left first
        const timedOut = err instanceof UpstreamTimeout;
        const retry = i + 1 < candidates.length && !timedOut && (!sent || (!body && IDEMPOTENT.has(req.method ?? '')));
        deps.logger.debug({ err, app: target.appName, container: up.containerName, retry }, 'router: upstream error');
        res.off('close', onClientGone);
        if (retry) return attempt(i + 1);
        if (body) {
          req.unpipe(upReq);
          req.resume();
        }
        ex.container = up.containerName;
        ex.bytes = sendPage(
          res,
          timedOut
            ? errorPage(504, `${up.containerName} did not answer within ${timeoutMs / 1000} s.`)
            : errorPage(502, `${up.containerName} closed the connection or refused it.`),
        );
      });
    };
    attempt(0);
  }

  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', (err) => deps.logger.debug({ err }, 'router: client socket error'));
    const ex = begin(req);
    const routed = route(ex);
    if ('page' in routed) {
      ex.bytes = sendRawPage(socket, routed.page, { 'x-request-id': ex.info.requestId });
      report(ex, routed.page.status);
      return;
    }
    const { target } = routed;
    proxyUpgrade({
      req,
      socket,
      head,
      info: ex.info,
      nowMs: ex.time,
      candidates: balancer.order(target, req.headers.cookie),
      timeoutMs,
      tunnels,
      stickyCookie: (up) => (target.stickySession ? balancer.stickyCookie(target, up, deps.clock.now()) : null),
      done(status, container, bytes) {
        ex.container = container;
        ex.bytes = bytes;
        report(ex, status);
      },
    });
  }

  return {
    server,
    listen: (port, host) =>
      new Promise<number>((ok, fail) => {
        server.once('error', fail);
        server.listen(port, host, () => {
          server.off('error', fail);
          ok((server.address() as AddressInfo).port);
        });
      }),
    async close() {
      // Upgraded sockets are not HTTP connections any more: server.close() alone would wait for them.
      for (const t of tunnels) t.destroy();
      await new Promise<void>((ok) => {
        if (!server.listening) return ok();
        server.close(() => ok());
        server.closeIdleConnections();
        // Long responses (streams, SSE) get a short grace, then are cut.
        setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS).unref();
      });
      agent.destroy();
    },
  };
}
