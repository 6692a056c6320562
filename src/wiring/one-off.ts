// One-off containers (#14–#18), assembled for the composition root: the API routes, the attach URL's
// HTTP routes, its CONNECT and WebSocket terminals, and the sessions behind them. Its area starts once
// the engine answers (sessions resume after the containers are reconciled) and stops before the API
// server closes (hijacked sockets would keep close() waiting).
import { type IncomingMessage } from 'node:http';
import { type Duplex } from 'node:stream';
import { type AppHooks } from '../modules/apps/apps.service.ts';
import { createAttachServer } from '../modules/one-off/attach-server.ts';
import { createAttacher } from '../modules/one-off/attach-session.ts';
import { createAttachSigner } from '../modules/one-off/attach-url.ts';
import { oneOffRoutes } from '../modules/one-off/one-off.routes.ts';
import { createOneOffService } from '../modules/one-off/one-off.service.ts';
import { createSessions } from '../modules/one-off/one-off.sessions.ts';
import { type Unit } from './area.ts';
import { defineArea } from './define-area.ts';

export const oneOffArea = defineArea({
  name: 'one-off',
  folders: ['one-off'],
  needs: ['accounts', 'apps', 'containers', 'logs'],
  build(shared, deps) {
    const { config, logger, runtime, clock, instanceId } = shared;
    const { apps, view } = deps.apps;
    const { containersStore: store, containers, orchestrator } = deps.containers;
    const intervals = config.intervals;
    const signer = createAttachSigner({ clock, ttlMs: intervals.attachUrlTtlMs });
    const sessions = createSessions({
      runtime,
      store,
      clock,
      logger,
      instanceId,
      stopGraceSeconds: intervals.stopGraceSeconds,
      keepEndedMs: intervals.attachUrlTtlMs,
      // A detached one-off's output is app logs while the logs collector reads its container.
      logsFollowing: (id) => deps.logs.collector.following().some((f) => f.engineId === id),
    });
    const service = createOneOffService({
      store,
      apps: apps.store,
      orchestrator,
      variables: deps.apps.variablesStore,
      operations: deps.containers.operations,
      runtime,
      events: deps.accounts.events,
      clock,
      logger,
      config,
      instanceId,
      signer,
      sessions,
      apiUrl: () => shared.urls().api,
      hasAccess: apps.hasAccess,
    });
    const attacher = createAttacher({ runtime, store, sessions, logger, idleMs: intervals.oneOffIdleMs, clock });
    const attachServer = createAttachServer({ oneOff: service, attacher, upgrades: shared.upgrades, logger });
    const uploadMaxBytes = config.oneOff.uploadMaxBytes;
    const routes = oneOffRoutes({
      oneOff: service,
      apps,
      containers,
      orchestrator,
      view,
      urls: shared.urls,
      uploadMaxBytes,
    });

    const unit: Unit = {
      name: 'one-off',
      routes: [routes],
      start: async ({ engineUp }) => void (engineUp && (await service.resume())),
      resume: () => service.resume(),
      stop: () => service.close(),
    };

    const api = {
      service,
      signer,
      /** The API server's 'connect' listener: the CLI's hijacked `CONNECT <attach_url>`. */
      handleConnect: (req: IncomingMessage, socket: Duplex, head: Buffer) =>
        void attachServer.handleConnect(req, socket, head),
    };
    // Open terminals of someone who lost access to the app end.
    return { api, units: [unit], appHooks: [{ afterAccessLost: (a) => service.revoke(a.id) }] satisfies AppHooks[] };
  },
});
