// Containers and what makes them: operations, the orchestrator (Docker ↔ database), deployments and
// their builds, bound directories (redeploy on change) and the deployments stream. Each gets its unit in
// LIFECYCLE: the orchestrator reconciles after the addon servers it connects apps to (the addons area),
// and stops reacting before the deployments and addon work drain.
import { join } from 'node:path';
import { DEFAULT_STACK_IMAGE } from '../config/schema.ts';
import { sayStandIns, waitForAddons } from '../modules/addons/addons-started.ts';
import { type AppHooks } from '../modules/apps/apps.service.ts';
import { type AppRow } from '../modules/apps/apps.store.ts';
import { buildCacheDir } from '../modules/caches/build-cache.ts';
import { createContainersService } from '../modules/containers/containers.service.ts';
import { createContainersStore } from '../modules/containers/containers.store.ts';
import { createDeployHookRunner } from '../modules/containers/deploy-hook.ts';
import { killOneShots, removeOneShots } from '../modules/containers/one-shots.ts';
import { createOrchestrator } from '../modules/containers/orchestrator.ts';
import { createDeploymentsService } from '../modules/deployments/deployments.service.ts';
import { createDeploymentsStore } from '../modules/deployments/deployments.store.ts';
import { registerDeploymentsStream } from '../modules/deployments/deployments.stream.ts';
import { bindDirectories } from '../modules/deployments/watcher.ts';
import { createOperationsService } from '../modules/operations/operations.service.ts';
import { createOperationsStore } from '../modules/operations/operations.store.ts';
import { type Unit } from './area.ts';
import { defineArea } from './define-area.ts';
import { lazyRoutes } from './lazy-routes.ts';

export const containersArea = defineArea({
  name: 'containers',
  folders: ['containers', 'operations', 'deployments'],
  needs: ['accounts', 'apps', 'sources', 'cron'],
  later: ['logs', 'addons'],
  build(shared, deps) {
    const { db, clock, config, logger, runtime, instanceId, stateDir } = shared;
    // The logs and addons areas are built after this one: reached from callbacks that run once everything is built.
    /** Signed URL of a container's logs (crash events). */
    const logsUrl = (app: AppRow, container: string) => deps.late('logs').service.signedUrl(app, container);
    /** Output of a postdeploy / first-deploy hook: the app's logs. */
    const onHookLine = (appId: string, name: string, line: string) => void deps.late('logs').append(appId, name, line);
    /** The app's network, when it has addon servers. */
    const networkOf = (appId: string) => deps.late('addons').servers?.networkOf(appId);
    /** Before a deployment's hook and containers: its stand-in addons named, its addon servers still starting waited for. */
    const addonsStarted = (appId: string, say: (line: string) => void) => {
      const addons = deps.late('addons');
      sayStandIns(addons.store.forApp(appId), (id) => Boolean(addons.servers?.server(id)), say);
      return config.addons.servers ? waitForAddons(addons.store, appId, say) : Promise.resolve();
    };
    const { auth, events } = deps.accounts;
    const { apps, variablesStore } = deps.apps;
    const containersStore = createContainersStore(db);
    const deploymentsStore = createDeploymentsStore(db);
    const operations = createOperationsService({ store: createOperationsStore(db), clock, log: logger });
    const orchestrator = createOrchestrator({
      runtime,
      store: containersStore,
      apps: apps.store,
      deployments: deploymentsStore,
      variables: variablesStore,
      events,
      clock,
      logger,
      config,
      instanceId,
      logsUrl,
      networkOf,
    });
    const containers = createContainersService({
      db,
      store: containersStore,
      apps: apps.store,
      orchestrator,
      operations,
      runtime,
      events,
      clock,
      sizes: config.containerSizes,
      instanceId,
      billingUrl: deps.apps.billingUrl,
      userById: auth.userById,
    });
    const runHook = createDeployHookRunner({
      runtime,
      instanceId,
      appEnv: (id) => variablesStore.asEnv(id),
      networkOf: (id) => orchestrator.networkOf(id),
      size: config.containerSizes.find((z) => z.name === 'M') ?? config.containerSizes[0],
      maxRunMs: 20 * 60_000,
    });
    const deployments = createDeploymentsService({
      store: deploymentsStore,
      apps: apps.store,
      containers: containersStore,
      orchestrator,
      runtime,
      events,
      clock,
      logger,
      stacks: config.stacks,
      baseImage: DEFAULT_STACK_IMAGE,
      workDir: join(stateDir, 'builds'),
      sources: config.sources,
      instanceId,
      userById: auth.userById,
      onCode: (appId, deploymentId, dir) => void deps.cron.recordFromBuild(appId, deploymentId, dir),
      runHook,
      onHookLine,
      addonsStarted,
      buildCacheDir: config.buildpacks.enabled ? (id) => buildCacheDir(stateDir, id) : undefined,
      appEnv: (id) => variablesStore.asEnv(id),
      buildNetwork: config.builds.network,
      imageSource: config.images.source,
      stopping: shared.shutdownGate.signal,
    });
    const appHooks: AppHooks[] = [
      // Deleting an app removes its containers and the images built for it (its addon servers follow: the
      // addons area's hooks run after these), and whatever build directory its deployments left.
      {
        beforeDelete: (app) => orchestrator.removeApp(app),
        afterDelete: (app) => orchestrator.forgetRemoved(app.id),
      },
      { afterDelete: () => void deployments.sweepBuilds() },
      // An app created with a git_source (local path or file://) deploys from it at once.
      {
        afterCreate: (app) => {
          if (app.git_source)
            void deployments.deploy(
              app,
              { kind: 'git', location: app.git_source },
              auth.userById(app.owner_id) ?? null,
            );
        },
      },
      registerDeploymentsStream({
        upgrades: shared.upgrades,
        deployments,
        store: deploymentsStore,
        auth,
        apps,
        pingMs: config.intervals.logsPingMs,
      }),
    ];

    const reconcile = async () => {
      try {
        // Builds and hooks a killed process left (nothing of this process builds yet): their work cannot resume.
        await removeOneShots(runtime, instanceId);
        const result = await orchestrator.reconcile();
        if (result.recreated || result.orphansRemoved) logger.info(result, 'reconciled containers with Docker');
      } catch (err) {
        logger.warn({ err }, 'could not reconcile containers with Docker');
      }
    };
    let bound: ReturnType<typeof bindDirectories> | undefined;
    const units: Unit[] = [
      { name: 'operations', open: () => operations.failInterrupted(), stop: () => operations.idle() },
      {
        name: 'deployments',
        routes: [
          lazyRoutes('deploymentsRoutes', () =>
            import('../modules/deployments/deployments.routes.ts').then((m) =>
              m.deploymentsRoutes({
                deployments,
                store: deploymentsStore,
                apps,
                urls: shared.urls,
                pagination: config.pagination,
                localSource: (u) => deps.sources.sources.localPathOf(u),
              }),
            ),
          ),
        ],
        // Work cut by the last stop ends plainly; build directories of a killed process go (nothing builds yet).
        async open() {
          deployments.abortInterrupted();
          await deployments.sweepBuilds();
        },
        stop: () => deployments.idle(),
      },
      {
        name: 'containers',
        routes: [
          lazyRoutes('containersRoutes', () =>
            import('../modules/containers/containers.routes.ts').then((m) =>
              m.containersRoutes({ containers, operations, apps, sizes: config.containerSizes, urls: shared.urls }),
            ),
          ),
        ],
        start: async ({ engineUp }) => void (engineUp && (await reconcile())),
        // Docker and the database are brought in line as a start would have, once the engine answers.
        resume: () => orchestrator.reconcile().then(() => undefined),
        // No more reactions to the engine (pending crash restarts), before the work under way drains.
        stop: () => orchestrator.close(),
      },
      // config docker.stopContainersOnExit: after the state is exported, before the engine connection closes.
      {
        name: 'containers-on-exit',
        stop: async () => {
          if (!config.docker.stopContainersOnExit) return;
          await orchestrator.stopAll().catch((err) => logger.warn({ err }, 'could not stop containers'));
          // The addon servers stop after the apps' containers.
          await deps.late('addons').servers?.stopServers();
          await removeOneShots(runtime, instanceId);
        },
      },
      // Stops first (last in LIFECYCLE): nothing new starts on the engine from now on, and the builds and hooks under
      // way are ended, so that the drains below (deployments, addon servers) end at once rather than after their work.
      {
        name: 'work-in-flight',
        stop: async () => {
          await shared.shutdownGate.close();
          await killOneShots(runtime, instanceId);
        },
      },
      // Bound directories (config `apps`): deployed at start, redeployed on change.
      {
        name: 'bound-directories',
        async start() {
          bound = bindDirectories({
            bound: config.apps,
            apps,
            deployments,
            userByLogin: auth.userByLogin,
            defaultOwner: config.users[0].username,
            debounceMs: config.intervals.watchDebounceMs,
            logger,
          });
          await bound.ready();
        },
        stop: () => bound?.close(),
      },
    ];
    return {
      api: { containersStore, deploymentsStore, operations, orchestrator, containers, deployments },
      units,
      appHooks,
    };
  },
});
