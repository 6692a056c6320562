// The two listening servers: the API (HTTP app, WebSocket upgrades, the CLI's CONNECT to an attach URL)
// and the router (http://<app>.localhost:<port> to the apps' web containers, custom domains). After the
// areas holding long-lived connections in the table (log streams, one-off terminals), which end first:
// a server's close() waits for its open connections.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { serve } from '@hono/node-server';
import { createRouter, type Router, type UpstreamSource } from '../router/proxy.ts';
import type { RouterEvents } from '../router/events.ts';
import { appRouteResolver, domainRouteResolver } from '../router/resolve.ts';
import type { Urls } from '../shared/urls.ts';
import type { Area, Shared } from './area.ts';

export interface ServersWiring {
  /** The HTTP app (createHttpApp) the API port serves. */
  app: { fetch: Parameters<typeof serve>[0]['fetch'] };
  /** The API server's 'connect' listener. */
  handleConnect: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  findApp: Parameters<typeof appRouteResolver>[0]['findApp'];
  upstreams: UpstreamSource;
  domains: { canonicalOf: Parameters<typeof appRouteResolver>[0]['canonicalOf']; route: Parameters<typeof domainRouteResolver>[0]['route'] };
  routerEvents: RouterEvents;
  /** The bound ports, once known. */
  setUrls: (urls: Partial<Urls>) => void;
}

export function buildServers(s: Shared, w: ServersWiring) {
  const { config, logger } = s;
  let apiServer: Server | undefined;
  let router: Router | undefined;
  const area: Area = {
    name: 'servers',
    async open() {
      apiServer = await new Promise<Server>((ok, fail) => {
        const srv = serve({ fetch: w.app.fetch, port: config.port, hostname: config.host }, () => ok(srv as Server)) as Server;
        srv.once('error', fail);
      });
      apiServer.on('upgrade', (req, socket, head) => void s.upgrades.handle(req, socket, head));
      apiServer.on('connect', w.handleConnect);
      const byAppName = appRouteResolver({ findApp: w.findApp, upstreams: w.upstreams, canonicalOf: w.domains.canonicalOf });
      router = createRouter({
        resolve: byAppName,
        resolveHost: domainRouteResolver({ route: w.domains.route, findApp: w.findApp, byName: byAppName }),
        onRequest: w.routerEvents.emitRequest,
        onAccessLog: w.routerEvents.emitAccessLog,
        logger,
        clock: s.clock,
      });
      const routerPort = await router.listen(config.routerPort, config.host);
      const apiPort = (apiServer.address() as AddressInfo).port;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      w.setUrls({ api: `http://${host}:${apiPort}`, router: `http://localhost:${routerPort}`, routerPort });
    },
    // In-flight requests finish; idle keep-alive sockets are closed so close() can return.
    async stop() {
      await Promise.all([
        router?.close(),
        ...[apiServer].map(
          (srv) =>
            new Promise<void>((ok) => {
              if (!srv?.listening) return ok();
              srv.close(() => ok());
              srv.closeIdleConnections();
            }),
        ),
      ]);
    },
  };
  return { area };
}
