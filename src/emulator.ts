import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { serve } from '@hono/node-server';
import type { EmulatorConfig } from './config/schema.ts';
import { openDatabase, metaValue, type Db } from './db/database.ts';
import { createLogger, type Logger } from './shared/logger.ts';
import { systemClock, ManualClock, type Clock } from './shared/clock.ts';
import type { Urls } from './shared/urls.ts';
import { createHttpApp } from './http/app.ts';
import { loadSecretKey } from './shared/secrets.ts';
import type { ContainerRuntime } from './runtime/runtime.ts';
import { createDockerRuntime } from './runtime/docker-runtime.ts';
import { createAuthStore } from './modules/auth/auth.store.ts';
import { createAuthService, type AuthService } from './modules/auth/auth.service.ts';
import { authRoutes } from './modules/auth/auth.routes.ts';
import { createEventsStore } from './modules/events/events.store.ts';
import { createEventsService, type EventsService } from './modules/events/events.service.ts';
import { eventsRoutes } from './modules/events/events.routes.ts';
import { createAppsStore } from './modules/apps/apps.store.ts';
import { createAppsService, type AppsService } from './modules/apps/apps.service.ts';
import { appsRoutes } from './modules/apps/apps.routes.ts';
import type { AppViewContext } from './modules/apps/apps.view.ts';
import { createCollaboratorsStore } from './modules/collaborators/collaborators.store.ts';
import { createCollaboratorsService } from './modules/collaborators/collaborators.service.ts';
import { collaboratorsRoutes } from './modules/collaborators/collaborators.routes.ts';
import { healthRoutes } from './modules/health/health.routes.ts';
import { emulatorRoutes } from './modules/health/emulator.routes.ts';
import { DEFAULT_STACK_IMAGE } from './config/schema.ts';
import { createContainersStore } from './modules/containers/containers.store.ts';
import { createOrchestrator, type Orchestrator } from './modules/containers/orchestrator.ts';
import { createContainersService } from './modules/containers/containers.service.ts';
import { containersRoutes } from './modules/containers/containers.routes.ts';
import { createOperationsStore } from './modules/operations/operations.store.ts';
import { createOperationsService } from './modules/operations/operations.service.ts';
import { createDeploymentsStore } from './modules/deployments/deployments.store.ts';
import { createDeploymentsService, type DeploymentsService } from './modules/deployments/deployments.service.ts';
import { deploymentsRoutes } from './modules/deployments/deployments.routes.ts';
import { createVariablesStore } from './modules/variables/variables.store.ts';
import { variablesRoutes } from './modules/variables/variables.routes.ts';
import { createVariablesService } from './modules/variables/variables.service.ts';
import { bindDirectories } from './modules/deployments/watcher.ts';
import { registerDeploymentsStream } from './modules/deployments/deployments.stream.ts';
import { createUpgradeTable, type UpgradeTable } from './http/ws.ts';
import { createRouter, type Router, type UpstreamSource } from './router/proxy.ts';
import { createRouterEvents, type RouterEvents } from './router/events.ts';
import { appRouteResolver, domainRouteResolver } from './router/resolve.ts';
import { createDomainsStore } from './modules/domains/domains.store.ts';
import { createDomainsService } from './modules/domains/domains.service.ts';
import { domainsRoutes } from './modules/domains/domains.routes.ts';
import { createMonitoring, type Monitoring } from './modules/stats/monitoring.ts';
import { createLogsModule, type LogsModule } from './modules/logs/logs.module.ts';
import { buildCacheDir } from './modules/caches/build-cache.ts';
import { createAddonServers, type AddonServers } from './modules/addons/addon-servers.ts';
import { createAddonServersStore } from './modules/addons/addon-servers.store.ts';
import { createTunnelTargets } from './modules/addons/addon-tunnels.ts';
import { createAddonsStore } from './modules/addons/addons.store.ts';
import { createOneOffModule } from './modules/one-off/one-off.module.ts';
import { dashboardRoutes } from './modules/dashboard/dashboard.routes.ts';
import { createFaults } from './modules/control/faults.ts';
import { withFaults } from './modules/control/runtime-faults.ts';
import { createControl, type Control } from './modules/control/control.ts';
import { controlRoutes } from './modules/control/control.routes.ts';
import { secret } from './shared/ids.ts';
import { createSourcesStore } from './modules/sources/sources.store.ts';
import { createSourcesService } from './modules/sources/sources.service.ts';
import { sourcesRoutes } from './modules/sources/sources.routes.ts';
import { createUrlSigner } from './modules/logs/logs-url.ts';
import { cachesRoutes } from './modules/caches/caches.routes.ts';
import { stacksRoutes } from './modules/stacks/stacks.routes.ts';
import { createProjectsStore } from './modules/projects/projects.store.ts';
import { createProjectsService } from './modules/projects/projects.service.ts';
import { projectsRoutes } from './modules/projects/projects.routes.ts';
import { accountRoutes } from './modules/account/account.routes.ts';
import { createKeysStore } from './modules/keys/keys.store.ts';
import { createKeysService, type KeysService } from './modules/keys/keys.service.ts';
import { keysRoutes } from './modules/keys/keys.routes.ts';
import { createGitModule, type GitModule } from './modules/git/git.module.ts';
import { createAutoscalersModule } from './modules/autoscalers/autoscalers.module.ts';
import { createCronModule } from './modules/cron/cron.module.ts';
import { defined } from './shared/defined.ts';

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

/** Wires every dependency of one emulator instance; nothing is global, so tests start many. */
export function createEmulator(config: EmulatorConfig, opts: EmulatorOptions = {}): Emulator {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const clock = opts.clock ?? (config.clock === 'manual' ? new ManualClock() : systemClock);
  const adminToken = config.adminToken ?? `ad-${secret(24).replace(/[^A-Za-z0-9]/g, '0')}`;
  const startedAt = Date.now();
  const dataDir = config.inMemory ? null : resolve(config.dataDir);
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // Only its owner reads the state (variables, tokens, logs): 0700 whatever the umask, also for an older dir.
  if (dataDir) chmodSync(dataDir, 0o700);
  const db = openDatabase({ file: dataDir ? join(dataDir, 'emulator.sqlite') : undefined, inMemory: config.inMemory });
  const stateDir = dataDir ?? mkdtempSync(join(tmpdir(), 'scalingo-emu-'));
  // One id per data directory (random per in-memory run): the label of the containers it owns.
  const instanceId = metaValue(db, 'instance_id', () => randomBytes(4).toString('hex'));
  // Workload faults (docker_unavailable, log_delay) act on the runtime every area sees.
  const faults = createFaults({ clock });
  const runtime = withFaults(opts.runtime ?? createDockerRuntime({ host: config.docker.host, socketPath: config.docker.socketPath || undefined, tls: config.docker.tls, publishHost: config.docker.publishHost }), faults);

  // Known once the ports are bound (port 0 picks a free one).
  const bracketed = config.host.includes(':') ? `[${config.host}]` : config.host;
  let urls: Urls = { api: `http://${config.host}:${config.port}`, router: `http://localhost:${config.routerPort}`, routerPort: config.routerPort, git: `ssh://git@${bracketed}:${config.sshPort}` };
  const getUrls = () => urls;

  const auth = createAuthService({ db, store: createAuthStore(db), clock, jwtSecret: loadSecretKey(dataDir, 'jwt.key'), bearerTtlSeconds: config.auth.bearerTtlSeconds });
  auth.syncUsers(config.users);
  const firstUser = defined(auth.userByLogin(config.users[0].username), 'the first configured user');
  const startupToken = config.users[0].apiTokens[0] ?? auth.rotateStartupToken(firstUser.id);

  const events = createEventsService({ store: createEventsStore(db), clock, userById: auth.userById });
  const keys = createKeysService({ db, store: createKeysStore(db), events, clock, logger, userById: auth.userById, userByLogin: auth.userByLogin });
  const collaboratorsStore = createCollaboratorsStore(db);
  const apps = createAppsService({
    db,
    store: createAppsStore(db),
    collaborators: collaboratorsStore,
    events,
    clock,
    stacks: config.stacks,
    defaultStack: config.defaultStack,
    billingUrl: () => `${urls.api}/_emulator/billing`,
    userByEmail: auth.userByEmail,
    userById: auth.userById,
  });
  const projects = createProjectsService({ db, store: createProjectsStore(db), events, clock, userById: auth.userById, visibleApp: (u, key) => apps.visibleApp(u, key) });
  const collaborators = createCollaboratorsService({
    db,
    store: collaboratorsStore,
    apps,
    events,
    clock,
    userByEmail: auth.userByEmail,
    userById: auth.userById,
    invitationUrl: (token) => `${urls.api}/v1/apps/collaboration?token=${token}`,
  });

  // Custom domains: API, and the router's table of hostnames (redirects to the canonical one).
  const domains = createDomainsService({ db, store: createDomainsStore(db), apps, events, clock });

  // Scalingo Scheduler: cron.json of the deployed code, jobs run as detached one-offs of the platform user.
  const cron = createCronModule({ db, apps, events, clock, logger, config, userById: auth.userById, oneOff: () => oneOff.service });

  const containersStore = createContainersStore(db);
  const deploymentsStore = createDeploymentsStore(db);
  const variablesStore = createVariablesStore(db);
  const operations = createOperationsService({ store: createOperationsStore(db), clock, log: logger });
  // Real addon servers (issue #15): app containers join the app's network with them.
  let logsRef: LogsModule | undefined;
  const addonServers: AddonServers | undefined = config.addons.servers
    ? createAddonServers({
        store: createAddonServersStore(db),
        variables: variablesStore,
        runtime,
        clock,
        logger,
        instanceId,
        setStatus: (id, status) => createAddonsStore(db).setStatus(id, status),
        restartApp: async (appId) => {
          const a = apps.find(appId);
          const rel = a && orchestrator.release(a);
          if (!a || !rel || orchestrator.gone(appId)) return;
          await orchestrator.converge(a, rel, () => true);
          orchestrator.settleStatus(appId);
        },
        onLines: (addonId, lines) => logsRef?.dispatcher.deliverAddon(addonId, lines),
      })
    : undefined;
  const orchestrator = createOrchestrator({ runtime, store: containersStore, apps: apps.store, deployments: deploymentsStore, variables: variablesStore, events, clock, logger, config, instanceId, logsUrl: (a, container) => logs.service.signedUrl(a, container), networkOf: addonServers?.networkOf });
  const containers = createContainersService({ db, store: containersStore, apps: apps.store, orchestrator, operations, runtime, events, clock, sizes: config.containerSizes, instanceId, billingUrl: () => `${urls.api}/_emulator/billing`, userById: auth.userById });
  const deployments = createDeploymentsService({ store: deploymentsStore, apps: apps.store, containers: containersStore, orchestrator, runtime, events, clock, logger, stacks: config.stacks, baseImage: DEFAULT_STACK_IMAGE, workDir: join(stateDir, 'builds'), sources: config.sources, instanceId, userById: auth.userById, onCode: (appId, deploymentId, dir) => void cron.recordFromBuild(appId, deploymentId, dir), buildCacheDir: config.buildpacks.enabled ? (id) => buildCacheDir(stateDir, id) : undefined });
  // Deleting an app removes its containers and the images built for it.
  apps.addHooks({ beforeDelete: (a) => orchestrator.removeApp(a), afterDelete: (a) => orchestrator.forgetRemoved(a.id) });
  // Then its addon servers, their volumes and the app's network (its containers are gone by now).
  // A reset or restore removes apps without the deletion path: afterDelete finds what is left by label.
  if (addonServers) apps.addHooks({ beforeDelete: (a) => addonServers.removeApp(a.id), afterDelete: (a) => void addonServers.removeLeftovers(a.id).catch((err: Error) => logger.warn({ err: err.message }, 'addon servers of a removed app not removed')) });
  // …and whatever build directory its deployments left.
  apps.addHooks({ afterDelete: () => void deployments.sweepBuilds() });
  // An app created with a git_source (local path or file://) deploys from it at once.
  apps.addHooks({ afterCreate: (a) => void (a.git_source && deployments.deploy(a, { kind: 'git', location: a.git_source }, auth.userById(a.owner_id) ?? null)) });
  let bound: ReturnType<typeof bindDirectories> | undefined;
  const monitoring = createMonitoring({
    db,
    runtime,
    apps,
    events,
    clock,
    logger,
    config,
    instanceId,
    stateDir,
    userById: auth.userById,
    formation: (appId) => containersStore.formation(appId),
  });
  // Autoscalers: API, and the engine that scales after each stats round as the platform's autoscaler user.
  const autoscalers = createAutoscalersModule({ db, apps, events, clock, logger, config, containers, monitoring, formation: (id) => containersStore.formation(id), releaseTypes: (a) => Object.keys(orchestrator.release(a)?.processTypes ?? {}), userById: auth.userById, billingUrl: () => `${urls.api}/_emulator/billing` });
  const upgrades = createUpgradeTable({ logger });
  registerDeploymentsStream({ upgrades, deployments, store: deploymentsStore, auth, apps, pingMs: config.intervals.logsPingMs });

  const view: AppViewContext = {
    get urls() {
      return urls;
    },
    region: config.region.name,
    ownerOf: (a) => auth.userById(a.owner_id),
    parentName: (a) => (a.parent_id ? (apps.find(a.parent_id)?.name ?? null) : null),
    projectOf: (a) => projects.ofApp(a),
  };

  const logs = createLogsModule({ db, clock, logger, config, runtime, instanceId, dataDir, stateDir, apps, events, view, upgrades, apiUrl: () => urls.api, addonServers });
  logsRef = logs;
  // One-off containers: run/stop/kill, and the attach URL (CONNECT, WebSocket, resize, uploads, wait).
  const oneOff = createOneOffModule({ config, clock, logger, runtime, instanceId, store: containersStore, apps, containers, orchestrator, variables: variablesStore, operations, events, view, upgrades, urls: getUrls, logsFollowing: (id) => logs.collector.following().some((f) => f.engineId === id) });

  const control = createControl({ config, db, clock, logger, runtime, instanceId, dataDir, stateDir, faults, apps, auth, orchestrator, containers: containersStore, startupToken, archivesDir: logs.archiver.dir, afterStateReplaced: () => {
      logs.maintain(true);
      // The configured SSH keys are there again after a restore of a snapshot from elsewhere.
      keys.syncConfigured(config.users).catch((err) => logger.warn({ err }, 'could not register the configured SSH keys'));
    } });
  // Uploaded sources (`scalingo deploy <archive>`): signed upload/download URLs, files in <state dir>/sources.
  const sources = createSourcesService({
    store: createSourcesStore(db),
    signer: createUrlSigner({ key: loadSecretKey(dataDir, 'sources.key'), clock }),
    clock,
    logger,
    dir: join(stateDir, 'sources'),
    apiUrl: () => urls.api,
    maxBytes: config.sources.maxArchiveBytes,
    ttlMs: config.sources.uploadTtlMs,
  });
  let sourcesSweep: NodeJS.Timeout | undefined;
  // git push: SSH endpoint, a bare repository per app, deployment of what is pushed.
  // db-tunnel reaches only addon servers of apps the key's user may access as owner or full collaborator
  // (a limited collaborator may not reach an addon's database, as for the addon token) (issue #15).
  const tunnels = addonServers && createTunnelTargets({ servers: addonServers, canAccess: (u, appId) => { try { return !!apps.writableApp(u, appId); } catch { return false; } } });
  const git = createGitModule({ config, dataDir, stateDir, apps, keys, deployments, deploymentsStore, appendLog: (id, container, text) => void logs.append(id, container, text), urls: getUrls, logger, tunnels });

  const app = createHttpApp({
    logger,
    clock,
    faults,
    auth,
    bodyLimitBytes: config.bodyLimitBytes,
    rateLimit: config.rateLimit,
    appAccess: apps.visibleApp,
    validateResponses: config.validateResponses,
    version: VERSION,
    routes: [
      healthRoutes({ db, runtime, startedAt, version: VERSION }),
      emulatorRoutes(),
      controlRoutes({ control, adminToken: () => adminToken }),
      dashboardRoutes({ auth, apps, usernames: () => config.users.map((u) => u.username), adminToken: () => adminToken, alertActive: (id) => monitoring.engine.isActive(id), bearerTtlSeconds: config.auth.bearerTtlSeconds }),
      authRoutes({ auth, urls: getUrls, regionName: config.region.name, regionDisplayName: config.region.displayName }),
      keysRoutes({ keys }),
      eventsRoutes({ events, apps, pagination: config.pagination }),
      collaboratorsRoutes({ collaborators, view }),
      domainsRoutes({ domains }),
      autoscalers.routes,
      cron.routes,
      containersRoutes({ containers, operations, apps, sizes: config.containerSizes, urls: getUrls }),
      deploymentsRoutes({ deployments, store: deploymentsStore, apps, urls: getUrls, pagination: config.pagination, localSource: (u) => sources.localPathOf(u) }),
      sourcesRoutes({ sources }),
      cachesRoutes({ apps, events, stateDir }),
      stacksRoutes({ stacks: config.stacks, defaultStack: config.defaultStack }),
      variablesRoutes({ variables: createVariablesService({ db, store: variablesStore, apps, events }) }),
      logs.routes,
      oneOff.routes,
      ...monitoring.routes,
      projectsRoutes({ projects }),
      accountRoutes({ apps, pagination: config.pagination }),
      appsRoutes({ apps, view, pagination: config.pagination, projects }),
    ],
  });

  // The router reaches an app's running web containers at the ports the runtime publishes (on its publishHost).
  const upstreams: UpstreamSource =
    opts.upstreams ??
    ((appId) =>
      containersStore
        .liveContainers(appId)
        .flatMap((c) => (c.type === 'web' && c.state === 'running' && c.host_port ? [{ containerName: `web-${c.type_index}`, host: runtime.publishHost, port: c.host_port }] : [])));
  const routerEvents = createRouterEvents(logger);
  routerEvents.onRequest(monitoring.recordRouterRequest);
  routerEvents.onAccessLog((appId, line) => void logs.append(appId, 'router', line));

  let apiServer: Server | undefined;
  let readiness: Promise<void> | undefined;
  let router: Router | undefined;

  return {
    config,
    get urls() {
      return urls;
    },
    db,
    dataDir,
    stateDir,
    instanceId,
    runtime,
    orchestrator,
    deployments,
    upgrades,
    auth,
    apps,
    events,
    app,
    startupToken,
    routerEvents,
    monitoring,
    logs,
    adminToken,
    control,
    clock,
    keys,
    git,

    async start() {
      // --import: the state of a snapshot file, before anything answers (Docker follows in ready()).
      if (config.importFile) control.importFile(config.importFile);
      apiServer = await new Promise<Server>((ok, fail) => {
        const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => ok(s as Server)) as Server;
        s.once('error', fail);
      });
      apiServer.on('upgrade', (req, socket, head) => void upgrades.handle(req, socket, head));
      apiServer.on('connect', oneOff.handleConnect);
      const byAppName = appRouteResolver({ findApp: apps.find, upstreams, canonicalOf: domains.canonicalOf });
      router = createRouter({
        resolve: byAppName,
        resolveHost: domainRouteResolver({ route: domains.route, findApp: apps.find, byName: byAppName }),
        onRequest: routerEvents.emitRequest,
        onAccessLog: routerEvents.emitAccessLog,
        logger,
        clock,
      });
      const routerPort = await router.listen(config.routerPort, config.host);
      const sshPort = await git.listen();
      const apiPort = (apiServer.address() as AddressInfo).port;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      urls = { api: `http://${host}:${apiPort}`, router: `http://localhost:${routerPort}`, routerPort, git: `ssh://git@${host}:${sshPort}` };
      logger.debug({ urls }, 'listening');
      // Work cut by the last stop ends plainly.
      operations.failInterrupted();
      deployments.abortInterrupted();
      // Build directories of a killed process (nothing builds yet).
      await deployments.sweepBuilds();
      // The API answers from here on; Docker and the database are brought in line in the background
      // (`ready()`), so a start does not wait on the engine.
      readiness = (async () => {
        const engine = await runtime.probe();
        if (engine.ok) {
          // Addon servers first: the app's containers connect to them when they start.
          await addonServers?.reconcile();
          try {
            const r = await orchestrator.reconcile();
            if (r.recreated || r.orphansRemoved) logger.info(r, 'reconciled containers with Docker');
          } catch (err) {
            logger.warn({ err }, 'could not reconcile containers with Docker');
          }
        } else {
          logger.warn({ error: engine.error }, 'Docker engine unavailable: container endpoints answer 503 until it is back');
          // Once it answers, Docker and the database are brought in line as a start would have.
          const off = runtime.onEngine((state) => {
            if (state !== 'up') return;
            off();
            void orchestrator
              .reconcile()
              .then(() => oneOff.start())
              .catch((err) => logger.warn({ err }, 'could not reconcile containers with Docker'));
          });
        }
        await logs.start();
        await keys.syncConfigured(config.users);
        if (engine.ok) await oneOff.start();
        cron.start();
        bound = bindDirectories({ bound: config.apps, apps, deployments, userByLogin: auth.userByLogin, defaultOwner: config.users[0].username, debounceMs: config.intervals.watchDebounceMs, logger });
        await bound.ready();
        monitoring.start();
        await sources.sweep();
        sourcesSweep = setInterval(() => void sources.sweep().catch((err) => logger.warn({ err }, 'sources: sweep failed')), config.sources.uploadSweepMs);
        sourcesSweep.unref();
      })();
      return urls;
    },

    ready: () => readiness ?? Promise.resolve(),

    async stop() {
      await readiness?.catch((err) => logger.warn({ err }, 'start-up work failed'));
      await auth.passwordsReady();
      // Log streams end first (the server's close() would wait for them), stored lines are flushed.
      await logs.stop();
      cron.stop();
      await oneOff.stop();
      clearInterval(sourcesSweep);
      // In-flight requests finish; idle keep-alive sockets are closed so close() can return.
      await Promise.all([
        router?.close(),
        ...[apiServer].map(
          (s) =>
            new Promise<void>((ok) => {
              if (!s?.listening) return ok();
              s.close(() => ok());
              s.closeIdleConnections();
            }),
        ),
      ]);
      await bound?.close();
      await git.close();
      upgrades.closeAll();
      orchestrator.close();
      await deployments.idle();
      await addonServers?.idle();
      addonServers?.stop();
      await operations.idle();
      // --export-on-exit: the state as it is once the work under way ended.
      if (config.exportOnExit && db.open) control.exportTo(config.exportOnExit);
      if (config.docker.stopContainersOnExit) await orchestrator.stopAll().catch((err) => logger.warn({ err }, 'could not stop containers'));
      await monitoring.stop();
      await runtime.close();
      if (db.open) db.close();
      if (!dataDir) rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
