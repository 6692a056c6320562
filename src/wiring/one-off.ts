// One-off containers (#14–#18), assembled for the composition root: the API routes, the attach URL's
// HTTP routes, its CONNECT and WebSocket terminals, and the sessions behind them. Its area starts once
// the engine answers (sessions resume after the containers are reconciled) and stops before the API
// server closes (hijacked sockets would keep close() waiting).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { EmulatorConfig } from '../config/schema.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { Urls } from '../shared/urls.ts';
import type { UpgradeTable } from '../http/ws.ts';
import type { ContainerRuntime } from '../runtime/runtime.ts';
import type { AppsService } from '../modules/apps/apps.service.ts';
import type { AppViewContext } from '../modules/apps/apps.view.ts';
import type { EventsService } from '../modules/events/events.service.ts';
import type { OperationsService } from '../modules/operations/operations.service.ts';
import type { VariablesStore } from '../modules/variables/variables.store.ts';
import type { ContainersStore } from '../modules/containers/containers.store.ts';
import type { ContainersService } from '../modules/containers/containers.service.ts';
import type { Orchestrator } from '../modules/containers/orchestrator.ts';
import { createAttachSigner } from '../modules/one-off/attach-url.ts';
import { createSessions } from '../modules/one-off/one-off.sessions.ts';
import { createAttacher } from '../modules/one-off/attach-session.ts';
import { createAttachServer } from '../modules/one-off/attach-server.ts';
import { createOneOffService } from '../modules/one-off/one-off.service.ts';
import { oneOffRoutes } from '../modules/one-off/one-off.routes.ts';
import type { Area } from './area.ts';

export interface OneOffModuleDeps {
  config: EmulatorConfig;
  clock: Clock;
  logger: Logger;
  runtime: ContainerRuntime;
  instanceId: string;
  store: ContainersStore;
  apps: AppsService;
  containers: ContainersService;
  orchestrator: Orchestrator;
  variables: VariablesStore;
  operations: OperationsService;
  events: EventsService;
  view: AppViewContext;
  upgrades: UpgradeTable;
  urls: () => Urls;
  /** True while the logs collector reads a container (a detached one-off's output is app logs). */
  logsFollowing?: (engineId: string) => boolean;
}

export function createOneOffModule(deps: OneOffModuleDeps) {
  const { config, logger, runtime } = deps;
  const t = config.intervals;
  const signer = createAttachSigner({ clock: deps.clock, ttlMs: t.attachUrlTtlMs });
  const sessions = createSessions({
    runtime,
    store: deps.store,
    clock: deps.clock,
    logger,
    instanceId: deps.instanceId,
    stopGraceSeconds: t.stopGraceSeconds,
    keepEndedMs: t.attachUrlTtlMs,
    logsFollowing: deps.logsFollowing,
  });
  const service = createOneOffService({
    store: deps.store,
    apps: deps.apps.store,
    orchestrator: deps.orchestrator,
    variables: deps.variables,
    operations: deps.operations,
    runtime,
    events: deps.events,
    clock: deps.clock,
    logger,
    config,
    instanceId: deps.instanceId,
    signer,
    sessions,
    apiUrl: () => deps.urls().api,
    hasAccess: deps.apps.hasAccess,
  });
  deps.apps.addHooks({ afterAccessLost: (a) => service.revoke(a.id) });
  const attacher = createAttacher({ runtime, store: deps.store, sessions, logger, idleMs: t.oneOffIdleMs, clock: deps.clock });
  const attachServer = createAttachServer({ oneOff: service, attacher, upgrades: deps.upgrades, logger });
  const routes = oneOffRoutes({ oneOff: service, apps: deps.apps, containers: deps.containers, orchestrator: deps.orchestrator, view: deps.view, urls: deps.urls, uploadMaxBytes: config.oneOff.uploadMaxBytes });

  const area: Area = {
    name: 'one-off',
    routes: [routes],
    start: async ({ engineUp }) => void (engineUp && (await service.resume())),
    resume: () => service.resume(),
    stop: () => service.close(),
  };

  return {
    area,
    routes,
    service,
    signer,
    /** The API server's 'connect' listener: the CLI's hijacked `CONNECT <attach_url>`. */
    handleConnect: (req: IncomingMessage, socket: Duplex, head: Buffer) => void attachServer.handleConnect(req, socket, head),
    /** After reconciliation with Docker (needs the engine). */
    start: () => service.resume(),
    /** Before the API server closes: hijacked sockets would keep close() waiting. */
    stop: () => service.close(),
  };
}

export type OneOffModule = ReturnType<typeof createOneOffModule>;
