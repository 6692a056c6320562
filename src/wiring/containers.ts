// Containers and what makes them: operations, the orchestrator (Docker ↔ database), deployments and
// their builds, real addon servers (issue #15), bound directories (redeploy on change) and the
// deployments stream. Each gets its row in the table: the orchestrator reconciles after the addon
// servers it connects apps to, and stops reacting before the deployments and addon work drain.
import { join } from 'node:path';
import { DEFAULT_STACK_IMAGE } from '../config/schema.ts';
import type { AppRow } from '../modules/apps/apps.store.ts';
import { createContainersStore } from '../modules/containers/containers.store.ts';
import { createOrchestrator } from '../modules/containers/orchestrator.ts';
import { createContainersService } from '../modules/containers/containers.service.ts';
import { containersRoutes } from '../modules/containers/containers.routes.ts';
import { createOperationsStore } from '../modules/operations/operations.store.ts';
import { createOperationsService } from '../modules/operations/operations.service.ts';
import { createDeploymentsStore } from '../modules/deployments/deployments.store.ts';
import { createDeploymentsService } from '../modules/deployments/deployments.service.ts';
import { deploymentsRoutes } from '../modules/deployments/deployments.routes.ts';
import { bindDirectories } from '../modules/deployments/watcher.ts';
import { registerDeploymentsStream } from '../modules/deployments/deployments.stream.ts';
import { buildCacheDir } from '../modules/caches/build-cache.ts';
import { createAddonServers, type AddonServers } from '../modules/addons/addon-servers.ts';
import { createAddonServersStore } from '../modules/addons/addon-servers.store.ts';
import { createAddonsStore } from '../modules/addons/addons.store.ts';
import { createDeployHookRunner } from '../modules/containers/deploy-hook.ts';
import { addonStatusSetter } from '../modules/addons/addon-status.ts';
import { waitForAddons } from '../modules/addons/addons-started.ts';
import type { Area, Shared } from './area.ts';
import type { Accounts } from './accounts.ts';
import type { Apps } from './apps.ts';

export interface ContainersWiring {
  /** Signed URL of a container's logs (crash events): the logs area, built later. */
  logsUrl: (app: AppRow, container: string) => string;
  /** Output of an addon server: to the addon's drains (the logs area, built later). */
  onAddonLines: NonNullable<Parameters<typeof createAddonServers>[0]['onLines']>;
  /** Code of a finished build (its cron.json): the cron area. */
  onCode: (appId: string, deploymentId: string, dir: string) => void;
  /** Path of an uploaded source archive (`scalingo deploy`), if the URL is one of the emulator's. */
  localSource: (url: string) => string | null;
  /** Output of a postdeploy / first-deploy hook: the app's logs (the logs area, built later). */
  onHookLine: (appId: string, name: string, line: string) => void;
}

export function buildContainers(s: Shared, accounts: Pick<Accounts, 'auth' | 'events'>, a: Pick<Apps, 'apps' | 'variablesStore' | 'billingUrl'>, w: ContainersWiring) {
  const { db, clock, config, logger, runtime, instanceId, stateDir } = s;
  const { auth, events } = accounts;
  const { apps, variablesStore } = a;
  const containersStore = createContainersStore(db);
  const deploymentsStore = createDeploymentsStore(db);
  const operations = createOperationsService({ store: createOperationsStore(db), clock, log: logger });
  const addonsStore = createAddonsStore(db);
  const addonsStarted = (appId: string, say: (line: string) => void) => waitForAddons(addonsStore, appId, say);
  // Real addon servers (issue #15): app containers join the app's network with them.
  const addonServers: AddonServers | undefined = config.addons.servers
    ? createAddonServers({
        store: createAddonServersStore(db),
        variables: variablesStore,
        runtime,
        clock,
        logger,
        instanceId,
        setStatus: addonStatusSetter({ store: addonsStore, events, appOf: (id) => apps.find(id) }),
        restartApp: async (appId) => {
          const since = clock.now();
          // A deployment under way starts its containers itself: restart after it, not in the middle of it.
          await deployments.appIdle(appId);
          const app = apps.find(appId);
          const rel = app && orchestrator.release(app);
          if (!app || !rel || orchestrator.gone(appId)) return;
          // Containers started since the server answered already have its variables and network.
          await orchestrator.converge(app, rel, (c) => c.created_at < since);
          orchestrator.settleStatus(appId);
        },
        onLines: w.onAddonLines,
      })
    : undefined;
  const orchestrator = createOrchestrator({ runtime, store: containersStore, apps: apps.store, deployments: deploymentsStore, variables: variablesStore, events, clock, logger, config, instanceId, logsUrl: w.logsUrl, networkOf: addonServers?.networkOf });
  const containers = createContainersService({ db, store: containersStore, apps: apps.store, orchestrator, operations, runtime, events, clock, sizes: config.containerSizes, instanceId, billingUrl: a.billingUrl, userById: auth.userById });
  const runHook = createDeployHookRunner({
    runtime,
    instanceId,
    appEnv: (id) => variablesStore.asEnv(id),
    networkOf: (id) => orchestrator.networkOf(id),
    size: config.containerSizes.find((z) => z.name === 'M') ?? config.containerSizes[0],
    maxRunMs: 20 * 60_000,
  });
  const deployments = createDeploymentsService({ store: deploymentsStore, apps: apps.store, containers: containersStore, orchestrator, runtime, events, clock, logger, stacks: config.stacks, baseImage: DEFAULT_STACK_IMAGE, workDir: join(stateDir, 'builds'), sources: config.sources, instanceId, userById: auth.userById, onCode: w.onCode, runHook, onHookLine: w.onHookLine, addonsStarted: addonServers && addonsStarted, buildCacheDir: config.buildpacks.enabled ? (id) => buildCacheDir(stateDir, id) : undefined });
  // Deleting an app removes its containers and the images built for it.
  apps.addHooks({ beforeDelete: (app) => orchestrator.removeApp(app), afterDelete: (app) => orchestrator.forgetRemoved(app.id) });
  // Then its addon servers, their volumes and the app's network (its containers are gone by now).
  // A reset or restore removes apps without the deletion path: afterDelete finds what is left by label.
  if (addonServers) apps.addHooks({ afterCreate: (app) => addonServers.appCreated(app.id), beforeDelete: (app) => addonServers.removeApp(app.id), afterDelete: (app) => void addonServers.removeLeftovers(app.id).catch((err: Error) => logger.warn({ err: err.message }, 'addon servers of a removed app not removed')) });
  // …and whatever build directory its deployments left.
  apps.addHooks({ afterDelete: () => void deployments.sweepBuilds() });
  // An app created with a git_source (local path or file://) deploys from it at once.
  apps.addHooks({ afterCreate: (app) => void (app.git_source && deployments.deploy(app, { kind: 'git', location: app.git_source }, auth.userById(app.owner_id) ?? null)) });
  registerDeploymentsStream({ upgrades: s.upgrades, deployments, store: deploymentsStore, auth, apps, pingMs: config.intervals.logsPingMs });

  const reconcile = async () => {
    try {
      const r = await orchestrator.reconcile();
      if (r.recreated || r.orphansRemoved) logger.info(r, 'reconciled containers with Docker');
    } catch (err) {
      logger.warn({ err }, 'could not reconcile containers with Docker');
    }
  };
  let bound: ReturnType<typeof bindDirectories> | undefined;
  const areas = {
    operations: { name: 'operations', open: () => operations.failInterrupted(), stop: () => operations.idle() } satisfies Area,
    // Addon servers first: the app's containers connect to them when they start.
    addonServers: {
      name: 'addon-servers',
      start: async ({ engineUp }) => void (engineUp && (await addonServers?.reconcile())),
      async stop() {
        await addonServers?.idle();
        addonServers?.stop();
      },
    } satisfies Area,
    deployments: {
      name: 'deployments',
      routes: [deploymentsRoutes({ deployments, store: deploymentsStore, apps, urls: s.urls, pagination: config.pagination, localSource: w.localSource })],
      // Work cut by the last stop ends plainly; build directories of a killed process go (nothing builds yet).
      async open() {
        deployments.abortInterrupted();
        await deployments.sweepBuilds();
      },
      stop: () => deployments.idle(),
    } satisfies Area,
    containers: {
      name: 'containers',
      routes: [containersRoutes({ containers, operations, apps, sizes: config.containerSizes, urls: s.urls })],
      start: async ({ engineUp }) => void (engineUp && (await reconcile())),
      // Docker and the database are brought in line as a start would have, once the engine answers.
      resume: () => orchestrator.reconcile().then(() => undefined),
      // No more reactions to the engine (pending crash restarts), before the work under way drains.
      stop: () => orchestrator.close(),
    } satisfies Area,
    /** config docker.stopContainersOnExit: after the state is exported, before the engine connection closes. */
    stopOnExit: {
      name: 'containers-on-exit',
      stop: async () => {
        if (!config.docker.stopContainersOnExit) return;
        await orchestrator.stopAll().catch((err) => logger.warn({ err }, 'could not stop containers'));
        await addonServers?.stopServers();
      },
    } satisfies Area,
    /** Bound directories (config `apps`): deployed at start, redeployed on change. */
    watcher: {
      name: 'bound-directories',
      async start() {
        bound = bindDirectories({ bound: config.apps, apps, deployments, userByLogin: auth.userByLogin, defaultOwner: config.users[0].username, debounceMs: config.intervals.watchDebounceMs, logger });
        await bound.ready();
      },
      stop: () => bound?.close(),
    } satisfies Area,
  };
  return { containersStore, deploymentsStore, operations, addonServers, orchestrator, containers, deployments, areas };
}

export type Containers = ReturnType<typeof buildContainers>;
