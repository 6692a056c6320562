import { readFileSync } from 'node:fs';
import type { EmulatorConfig } from './config/schema.ts';
import type { Db } from './db/database.ts';
import type { Logger } from './shared/logger.ts';
import type { Clock } from './shared/clock.ts';
import type { Urls } from './shared/urls.ts';
import { createHttpApp } from './http/app.ts';
import type { UpgradeTable } from './http/ws.ts';
import type { ContainerRuntime } from './runtime/runtime.ts';
import type { AuthService } from './modules/auth/auth.service.ts';
import type { AppsService } from './modules/apps/apps.service.ts';
import type { EventsService } from './modules/events/events.service.ts';
import type { KeysService } from './modules/keys/keys.service.ts';
import type { Orchestrator } from './modules/containers/orchestrator.ts';
import type { DeploymentsService } from './modules/deployments/deployments.service.ts';
import type { Control } from './modules/control/control.ts';
import type { UpstreamSource } from './router/proxy.ts';
import { createRouterEvents, type RouterEvents } from './router/events.ts';
import { createTunnelTargets } from './modules/addons/addon-tunnels.ts';
import { type Area, openAreas, resumeAreas, routesOf, startAreas, stopAreas } from './wiring/area.ts';
import { createState } from './wiring/state.ts';
import { buildAccounts } from './wiring/accounts.ts';
import { buildApps } from './wiring/apps.ts';
import { buildContainers } from './wiring/containers.ts';
import { buildControl } from './wiring/control.ts';
import { buildSources } from './wiring/sources.ts';
import { buildServers } from './wiring/servers.ts';
import { createMonitoring, type Monitoring } from './wiring/monitoring.ts';
import { createLogsModule, type LogsModule } from './wiring/logs.ts';
import { createOneOffModule } from './wiring/one-off.ts';
import { createGitModule, type GitModule } from './wiring/git.ts';
import { createAutoscalersModule } from './wiring/autoscalers.ts';
import { createCronModule } from './wiring/cron.ts';

export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface EmulatorOptions {
  logger?: Logger;
  clock?: Clock;
  /** Another runtime (tests); default: Docker through dockerode. */
  runtime?: ContainerRuntime;
  /** Running web containers and their 127.0.0.1 host ports, per app id, for the router (tests may stub it). */
  upstreams?: UpstreamSource;
}

export interface Emulator {
  config: EmulatorConfig;
  urls: Urls;
  db: Db;
  dataDir: string | null;
  /** Where builds and other working files go: the data dir, or a temp dir removed on stop (--in-memory). */
  stateDir: string;
  /** Labels this data dir's containers; kept across restarts. */
  instanceId: string;
  runtime: ContainerRuntime;
  orchestrator: Orchestrator;
  deployments: DeploymentsService;
  /** WebSocket upgrades on the API port, by path prefix (logs stream, deployments stream, attach…). */
  upgrades: UpgradeTable;
  auth: AuthService;
  apps: AppsService;
  events: EventsService;
  app: ReturnType<typeof createHttpApp>;
  /** Ready-to-use API token of the first configured user, replaced at each start. */
  startupToken: string;
  /** Per-request records (router metrics) and access lines (router logs) of the router. */
  routerEvents: RouterEvents;
  /** Stats sampler, metrics, alerts (and their engine) and notifiers. */
  monitoring: Monitoring;
  /** Logs, drains, archives, addons; `logs.append(appId, container, text)` for other areas. */
  logs: LogsModule;
  /** Token of the control plane (/_emulator/*): config adminToken, or a random `ad-…` one per start. */
  adminToken: string;
  /** The control plane in-process: reset, snapshots, restore, faults, clock (the /_emulator/* routes call it). */
  control: Control;
  /** The emulator's time source (a ManualClock with `clock: "manual"`). */
  clock: Clock;
  /** SSH public keys of the users (/v1/keys): what the git endpoint authenticates with. */
  keys: KeysService;
  /** The git endpoint (SSH server, repositories, push deployments). */
  git: GitModule;
  /** Binds the ports; resolves as soon as the API answers. */
  start(): Promise<Urls>;
  /** Resolves once the start-up work is done: containers reconciled, logs followed, bound directories watched. */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Wires every dependency of one emulator instance; nothing is global, so tests start many. Each area is
 * built by its file in src/wiring/ from the shared state; what one area needs of another is passed here,
 * as a value or a callback (late-bound where the other is built further down).
 */
export function createEmulator(config: EmulatorConfig, opts: EmulatorOptions = {}): Emulator {
  const state = createState(config, opts);
  const { db, clock, logger, runtime, stateDir } = state;

  const accounts = buildAccounts(state);
  const { auth, events, keys } = accounts;
  const apps = buildApps(state, accounts);
  const sources = buildSources(state);
  const cron = createCronModule({ db, apps: apps.apps, events, clock, logger, config, userById: auth.userById, oneOff: () => oneOff.service });
  const c = buildContainers(state, accounts, apps, {
    logsUrl: (a, container) => logs.service.signedUrl(a, container),
    onAddonLines: (addonId, lines) => logs.dispatcher.deliverAddon(addonId, lines),
    onCode: (appId, deploymentId, dir) => void cron.recordFromBuild(appId, deploymentId, dir),
    localSource: (u) => sources.sources.localPathOf(u),
    onHookLine: (appId, name, line) => void logs.append(appId, name, line),
  });
  const { orchestrator, deployments, containersStore, addonServers } = c;
  const formation = (appId: string) => containersStore.formation(appId);
  const monitoring = createMonitoring({ db, runtime, apps: apps.apps, events, clock, logger, config, instanceId: state.instanceId, stateDir, userById: auth.userById, formation });
  // Autoscalers: API, and the engine that scales after each stats round as the platform's autoscaler user.
  const autoscalers = createAutoscalersModule({ db, apps: apps.apps, events, clock, logger, config, containers: c.containers, monitoring, formation, releaseTypes: (a) => Object.keys(orchestrator.release(a)?.processTypes ?? {}), userById: auth.userById, billingUrl: apps.billingUrl });
  const logs = createLogsModule({ db, clock, logger, config, runtime, instanceId: state.instanceId, dataDir: state.dataDir, stateDir, apps: apps.apps, events, view: apps.view, upgrades: state.upgrades, apiUrl: () => state.urls().api, addonServers, projects: apps.projects });
  // One-off containers: run/stop/kill, and the attach URL (CONNECT, WebSocket, resize, uploads, wait).
  const oneOff = createOneOffModule({ config, clock, logger, runtime, instanceId: state.instanceId, store: containersStore, apps: apps.apps, containers: c.containers, orchestrator, variables: apps.variablesStore, operations: c.operations, events, view: apps.view, upgrades: state.upgrades, urls: state.urls, logsFollowing: (id) => logs.collector.following().some((f) => f.engineId === id) });
  const { control, areas: own } = buildControl(state, {
    faults: state.faults, adminToken: state.adminToken, startedAt: state.startedAt, version: VERSION, apps: apps.apps, auth, orchestrator, containers: containersStore, startupToken: accounts.startupToken, archivesDir: logs.archiver.dir,
    alertActive: (id) => monitoring.engine.isActive(id),
    afterStateReplaced: () => {
      logs.maintain(true);
      // The configured SSH keys are there again after a restore of a snapshot from elsewhere.
      keys.syncConfigured(config.users).catch((err) => logger.warn({ err }, 'could not register the configured SSH keys'));
    },
  });
  // git push: SSH endpoint, a bare repository per app, deployment of what is pushed.
  // db-tunnel reaches only addon servers of apps the key's user may access as owner or full collaborator
  // (a limited collaborator may not reach an addon's database, as for the addon token) (issue #15).
  const tunnels = addonServers && createTunnelTargets({ servers: addonServers, canAccess: (u, appId) => { try { return !!apps.apps.writableApp(u, appId); } catch { return false; } } });
  const git = createGitModule({ config, dataDir: state.dataDir, stateDir, apps: apps.apps, keys, deployments, deploymentsStore: c.deploymentsStore, appendLog: (id, container, text) => void logs.append(id, container, text), urls: state.urls, logger, tunnels, setUrls: state.setUrls });

  // The router reaches an app's running web containers at the ports the runtime publishes (on its publishHost).
  const upstreams: UpstreamSource = opts.upstreams ?? ((appId) => containersStore.liveContainers(appId).flatMap((x) => (x.type === 'web' && x.state === 'running' && x.host_port ? [{ containerName: `web-${x.type_index}`, host: runtime.publishHost, port: x.host_port }] : [])));
  const routerEvents = createRouterEvents(logger);
  routerEvents.onRequest(monitoring.recordRouterRequest);
  routerEvents.onAccessLog((appId, line) => void logs.append(appId, 'router', line));
  const servers = buildServers(state, { app: { fetch: (...a) => app.fetch(...a) }, handleConnect: oneOff.handleConnect, findApp: apps.apps.find, upstreams, domains: apps.domains, routerEvents, setUrls: state.setUrls });

  // Every area, once. Opened (start) and started (ready) in this order, stopped in reverse order; route
  // groups mounted in this order (the apps area, with the /v1/apps/:app catch-alls, last).
  const areas: Area[] = [
    state.area, // engine connection, database, temp dir: closed last
    monitoring.areas.monitoring, // stats, alerts, notifiers: notifications of the work that ends below still go out
    c.areas.stopOnExit, // docker.stopContainersOnExit, once the state is exported
    own.health,
    own.control, // --import before anything answers, --export-on-exit once the work under way ended
    own.dashboard,
    accounts.areas.auth, // configured passwords hashed before the export
    c.areas.operations,
    c.areas.addonServers, // reconciled first: the apps' containers connect to them
    c.areas.deployments,
    c.areas.containers, // reconciled with Docker; stops reacting to the engine before the work drains
    state.upgradesArea,
    git.area,
    servers.area, // API and router ports; closed once the streams and terminals below ended
    logs.area, // collection, drains, addons; streams end before the servers close
    accounts.areas.keys,
    apps.areas.events,
    apps.areas.collaborators, // /v1/apps/collaboration before the apps area's /v1/apps/:app
    apps.areas.domains,
    autoscalers.area,
    oneOff.area,
    cron.area,
    c.areas.watcher, // bound directories deployed once the rest runs
    monitoring.areas.sampler,
    sources.area,
    apps.areas.caches,
    apps.areas.stacks,
    apps.areas.variables,
    apps.areas.projects,
    apps.areas.account,
    apps.areas.apps,
  ];

  const app = createHttpApp({ logger, clock, faults: state.faults, auth, bodyLimitBytes: config.bodyLimitBytes, rateLimit: config.rateLimit, appAccess: apps.apps.visibleApp, validateResponses: config.validateResponses, version: VERSION, routes: routesOf(areas) });

  let readiness: Promise<void> | undefined;
  return {
    config,
    get urls() {
      return state.urls();
    },
    db,
    dataDir: state.dataDir,
    stateDir,
    instanceId: state.instanceId,
    runtime,
    orchestrator,
    deployments,
    upgrades: state.upgrades,
    auth,
    apps: apps.apps,
    events,
    app,
    startupToken: accounts.startupToken,
    routerEvents,
    monitoring,
    logs,
    adminToken: state.adminToken,
    control,
    clock,
    keys,
    git,

    async start() {
      await openAreas(areas, logger);
      const urls = state.urls();
      logger.debug({ urls }, 'listening');
      // The API answers from here on; Docker and the database are brought in line in the background
      // (`ready()`), so a start does not wait on the engine.
      readiness = (async () => {
        const engine = await runtime.probe();
        if (!engine.ok) {
          logger.warn({ error: engine.error }, 'Docker engine unavailable: container endpoints answer 503 until it is back');
          // Once it answers, what needs it runs as a start would have.
          const off = runtime.onEngine((st) => {
            if (st !== 'up') return;
            off();
            void resumeAreas(areas, logger).catch((err) => logger.warn({ err }, 'could not reconcile containers with Docker'));
          });
        }
        await startAreas(areas, logger, { engineUp: engine.ok });
      })();
      return urls;
    },

    ready: () => readiness ?? Promise.resolve(),

    async stop() {
      await readiness?.catch((err) => logger.warn({ err }, 'start-up work failed'));
      await stopAreas(areas, logger);
    },
  };
}
