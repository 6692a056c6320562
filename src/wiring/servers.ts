// The two listening servers: the API (HTTP app, WebSocket upgrades, the CLI's CONNECT to an attach URL)
// and the router (http://<app>.localhost:<port> to the apps' web containers, custom domains). After the
// units holding long-lived connections in LIFECYCLE (log streams, one-off terminals), which end first:
// a server's close() waits for its open connections.
import { type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { urlHostOf } from '../config/schema.ts';
import { createRouterEvents } from '../router/events.ts';
import { createRouter, type Router, type UpstreamSource } from '../router/proxy.ts';
import { appRouteResolver, domainRouteResolver } from '../router/resolve.ts';
import { type Unit } from './area.ts';
import { defineArea } from './define-area.ts';

export const serversArea = defineArea({
  name: 'servers',
  folders: [],
  needs: ['apps', 'containers', 'monitoring', 'logs', 'one-off'],
  later: ['http'],
  build(shared, deps) {
    const { config, logger, runtime } = shared;
    const { apps, domains } = deps.apps;
    const findApp = apps.find;
    // The router reaches an app's running web containers at their addresses (runtime.addressOf: published ports on
    // publishHost, or aliases on docker.network).
    const { containersStore } = deps.containers;
    const running: UpstreamSource = (appId) =>
      containersStore.liveContainers(appId).flatMap((x) => {
        if (x.type !== 'web' || x.state !== 'running' || !x.host_port || !x.engine_id) return [];
        return [
          { containerName: `web-${x.type_index}`, ...runtime.addressOf({ engineId: x.engine_id, port: x.host_port }) },
        ];
      });
    const upstreams = shared.upstreams ?? running;
    const routerEvents = createRouterEvents(logger);
    routerEvents.onRequest(deps.monitoring.recordRouterRequest);
    routerEvents.onAccessLog((appId, line) => void deps.logs.append(appId, 'router', line));
    let apiServer: Server | undefined;
    let router: Router | undefined;
    const unit: Unit = {
      name: 'servers',
      async open() {
        apiServer = await new Promise<Server>((ok, fail) => {
          // The HTTP app the API port serves: the http area is built last, so it is asked for when the server opens.
          const srv = serve({ fetch: deps.late('http').app.fetch, port: config.port, hostname: config.host }, () =>
            ok(srv as Server),
          ) as Server;
          srv.once('error', fail);
        });
        apiServer.on('upgrade', (req, socket, head) => void shared.upgrades.handle(req, socket, head));
        apiServer.on('connect', deps['one-off'].handleConnect);
        const byAppName = appRouteResolver({ findApp, upstreams, canonicalOf: domains.canonicalOf });
        router = createRouter({
          resolve: byAppName,
          resolveHost: domainRouteResolver({ route: domains.route, findApp, byName: byAppName }),
          onRequest: routerEvents.emitRequest,
          onAccessLog: routerEvents.emitAccessLog,
          logger,
          clock: shared.clock,
        });
        const routerPort = await router.listen(config.routerPort, config.host);
        const apiPort = (apiServer.address() as AddressInfo).port;
        shared.setUrls({
          api: `http://${urlHostOf(config)}:${apiPort}`,
          router: `http://localhost:${routerPort}`,
          routerPort,
        });
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
    /** Per-request records (router metrics) and access lines (router logs) of the router. */
    return { api: { routerEvents }, units: [unit] };
  },
});
