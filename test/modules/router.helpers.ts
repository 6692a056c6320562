// Plain Node HTTP servers on 127.0.0.1:0 standing in for web containers, and a raw HTTP client that
// can set any Host header (fetch cannot), for the router tests.

import { createHash } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import { type AddressInfo } from 'node:net';

export interface TestUpstream {
  name: string;
  port: number;
  server: Server;
  /** Requests that reached this upstream. */
  hits: number;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, up: TestUpstream) => void;

/** Answers its name; `/headers` echoes the request headers as JSON; `/echo` answers the body's length and sha256. */
export const defaultHandler: Handler = (req, res, up) => {
  if (req.url === '/headers') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers));
    return;
  }
  if (req.url === '/echo') {
    const hash = createHash('sha256');
    let len = 0;
    req.on('data', (c: Buffer) => {
      len += c.length;
      hash.update(c);
    });
    req.on('end', () =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          name: up.name,
          len,
          sha256: hash.digest('hex'),
          te: req.headers['transfer-encoding'] ?? null,
        }),
      ),
    );
    return;
  }
  req.resume();
  res.writeHead(200, { 'content-type': 'text/plain', 'x-upstream': up.name }).end(up.name);
};

export async function startUpstream(name: string, handler: Handler = defaultHandler): Promise<TestUpstream> {
  const server = createServer();
  const up: TestUpstream = {
    name,
    port: 0,
    server,
    hits: 0,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
  server.on('request', (req, res) => {
    up.hits++;
    handler(req, res, up);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  up.port = (server.address() as AddressInfo).port;
  return up;
}

/** A loopback port nothing listens on (bound then released). */
export async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', () => ok()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

export interface Sent {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export function send(
  port: number,
  o: {
    host: string;
    path?: string;
    method?: string;
    headers?: Record<string, string>;
    body?: Buffer | string | Buffer[];
  },
): Promise<Sent> {
  return new Promise((ok, fail) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: o.method ?? 'GET',
        path: o.path ?? '/',
        headers: { host: o.host, ...o.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          ok({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    // An array is written piece by piece without a length: the body goes chunked.
    if (Array.isArray(o.body)) for (const part of o.body) req.write(part);
    else if (o.body !== undefined) req.write(o.body);
    req.end();
  });
}

/** Polls until `fn` gives a value (async outcomes such as records emitted when a response closes). */
export async function until<T>(fn: () => T | undefined | null | false, what: string, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// ---- a router over a stubbed app table ----
import {
  createRouter,
  type Router,
  type RouterRequestRecord,
  type RouteTarget,
  type Upstream,
} from '../../src/router/proxy.ts';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';

export interface TestRouter {
  router: Router;
  port: number;
  /** App name → what resolve() answers; tests edit it between requests. */
  apps: Map<string, RouteTarget>;
  records: RouterRequestRecord[];
  lines: { appId: string; line: string; container: string | null }[];
  /** Adds an app (id `id-<name>`) served by `upstreams`. */
  app(name: string, upstreams: (TestUpstream | Upstream)[], settings?: Partial<RouteTarget>): RouteTarget;
  close(): Promise<void>;
}

export async function startTestRouter(opts: { timeoutMs?: number } = {}): Promise<TestRouter> {
  const apps = new Map<string, RouteTarget>();
  const records: RouterRequestRecord[] = [];
  const lines: TestRouter['lines'] = [];
  const router = createRouter({
    resolve: (name) => apps.get(name) ?? null,
    onRequest: (r) => records.push(r),
    onAccessLog: (appId, line, container) => lines.push({ appId, line, container }),
    logger: createLogger('silent'),
    clock: systemClock,
    timeoutMs: opts.timeoutMs,
  });
  const port = await router.listen(0, '127.0.0.1');
  return {
    router,
    port,
    apps,
    records,
    lines,
    app(name, upstreams, settings = {}) {
      const target: RouteTarget = {
        appId: `id-${name}`,
        appName: name,
        forceHttps: false,
        stickySession: false,
        routerLogs: false,
        upstreams: upstreams.map((u, i) =>
          'containerName' in u ? u : { containerName: `web-${i + 1}`, port: u.port },
        ),
        ...settings,
      };
      apps.set(name, target);
      return target;
    },
    close: () => router.close(),
  };
}
