// Addons: the service and its routes, the real addon servers (issue #15) with their backups, restores,
// logs and db-tunnel targets, the dedicated databases (wiring/databases.ts) and the database API. Two
// units: `addon-servers` (reconciled before the apps' containers that join their network) and `addons`
// (routes after the logs and drains ones; its streams and backups end before the servers close).
import { join } from 'node:path';
import { createAddonBackupsStore } from '../modules/addons/addon-backups.store.ts';
import { createAddonBackups } from '../modules/addons/addon-backups.ts';
import { registerAddonLogsWebSocket } from '../modules/addons/addon-logs.ws.ts';
import { type AddonPitr, createAddonPitr } from '../modules/addons/addon-pitr.ts';
import { createAddonServersStore } from '../modules/addons/addon-servers.store.ts';
import { createAddonServers } from '../modules/addons/addon-servers.ts';
import { addonStatusSetter } from '../modules/addons/addon-status.ts';
import { createTunnelTargets } from '../modules/addons/addon-tunnels.ts';
import { createAddonsService } from '../modules/addons/addons.service.ts';
import { createAddonsStore } from '../modules/addons/addons.store.ts';
import { databaseApiRoutes } from '../modules/addons/database-api.routes.ts';
import { databaseFeaturesRoutes } from '../modules/addons/database-features.routes.ts';
import { databasePitrRoutes } from '../modules/addons/database-pitr.routes.ts';
import { createTcpGatewaysStore } from '../modules/addons/tcp-gateways.store.ts';
import { createTcpGateways, TCP_PROCESS_TYPE } from '../modules/addons/tcp-gateways.ts';
import { type AppHooks } from '../modules/apps/apps.service.ts';
import { createUrlSigner } from '../modules/logs/logs-url.ts';
import { loadSecretKey } from '../shared/secrets.ts';
import { type RouteGroup, type Unit } from './area.ts';
import { createDatabasesWiring } from './databases.ts';
import { defineArea } from './define-area.ts';
import { lazyRoutes } from './lazy-routes.ts';

export const addonsArea = defineArea({
  name: 'addons',
  folders: ['addons', 'databases'],
  needs: ['accounts', 'apps', 'containers'],
  later: ['logs'],
  build(shared, deps) {
    const { db, clock, logger } = shared;
    const { apps } = deps.apps;
    const { events } = deps.accounts;
    const apiUrl = () => shared.urls().api;
    const signer = (file: string) => createUrlSigner({ key: loadSecretKey(shared.dataDir, file), clock });
    const store = createAddonsStore(db);
    // Real addon servers (issue #15): app containers join the app's network with them.
    const setStatus = addonStatusSetter({ store, events, appOf: (id) => apps.find(id) });
    // Point-in-time recovery of PostgreSQL servers: turned on as each server answers (its base backup).
    let pitr: AddonPitr | undefined;
    const { deployments, orchestrator } = deps.containers;
    const servers = shared.config.addons.servers
      ? createAddonServers({
          store: createAddonServersStore(shared.db),
          variables: deps.apps.variablesStore,
          runtime: shared.runtime,
          clock: shared.clock,
          logger: shared.logger,
          instanceId: shared.instanceId,
          imageSource: shared.config.images.source,
          setStatus,
          restartApp: async (appId) => {
            const since = shared.clock.now();
            // A deployment under way starts its containers itself: restart after it, not in the middle of it.
            await deployments.appIdle(appId);
            const app = apps.find(appId);
            const rel = app && orchestrator.release(app);
            if (!app || !rel || orchestrator.gone(appId)) return;
            // Containers started since the server answered already have its variables and network.
            await orchestrator.converge(app, rel, (c) => c.created_at < since);
            orchestrator.settleStatus(appId);
          },
          // Output of an addon server: to the addon's drains (the logs area, built after this one).
          onLines: (addonId, lines) => deps.late('logs').dispatcher.deliverAddon(addonId, lines),
          onRunning: (row) => pitr?.onRunning(row.addon_id),
        })
      : undefined;
    // TCP gateway addons (issue 34): a listener on 127.0.0.1 per addon, forwarding to the app's running `tcp` containers.
    const { containersStore } = deps.containers;
    const gateways = createTcpGateways({
      store: createTcpGatewaysStore(db),
      variables: deps.apps.variablesStore,
      upstreams: (appId) =>
        containersStore
          .liveContainers(appId)
          .flatMap((c) =>
            c.type === TCP_PROCESS_TYPE && c.state === 'running' && c.host_port && c.engine_id
              ? [shared.runtime.addressOf({ engineId: c.engine_id, port: c.host_port })]
              : [],
          ),
      logger,
    });
    const addons = createAddonsService({ db, store, apps, events, clock, servers, gateways, setStatus });
    pitr =
      servers &&
      createAddonPitr({ servers, addonOf: (id) => store.byId(id), operations: deps.containers.operations, logger });

    const routes: RouteGroup[] = [
      lazyRoutes('addonsRoutes', () =>
        import('../modules/addons/addons.routes.ts').then((m) => m.addonsRoutes({ addons })),
      ),
    ];
    // Backups, users and logs of real addon servers in the database API (stand-ins fall through to its 400).
    const backups = servers
      ? createAddonBackups({
          store: createAddonBackupsStore(db),
          servers,
          signer: signer('addons.key'),
          clock,
          logger,
          dir: join(shared.stateDir, 'addon-backups'),
          apiUrl,
        })
      : undefined;
    let followers: { closeAll(): void } | undefined;
    if (servers && backups) {
      const logsSigner = signer('addon-logs.key');
      routes.push(databaseFeaturesRoutes({ addons, servers, backups, signer: logsSigner, apiUrl }));
      followers = registerAddonLogsWebSocket(shared.upgrades, { signer: logsSigner, servers });
    }
    // Dedicated databases (/v1/databases); firewall rules, settings and logs archives in the database API (issue 22).
    const dbs = createDatabasesWiring({
      db,
      clock,
      region: shared.config.region.name,
      apps,
      addons,
      servers,
      projects: deps.apps.projects,
      view: deps.apps.view,
      signer: signer('addon-logs-archives.key'),
      apiUrl,
      backups,
      logger,
    });
    if (servers && pitr) routes.push(databasePitrRoutes({ addons, servers, pitr }));
    routes.push(...dbs.routes);
    // The database API of the addons (SCALINGO_DB_URL points at the emulator, prefix /api).
    const appName = (id: string) => apps.find(id)?.name ?? id;
    routes.push(databaseApiRoutes({ addons, appName, servers, describe: dbs.databases.describe }));
    if (servers)
      routes.push(
        lazyRoutes('addonServersRoutes', () =>
          import('../modules/addons/addon-servers.routes.ts').then((m) => m.addonServersRoutes({ addons, servers })),
        ),
      );

    // db-tunnel reaches only addon servers of apps the key's user may access as owner or full collaborator
    // (a limited collaborator may not reach an addon's database, as for the addon token) (issue #15).
    const canAccess = (user: Parameters<typeof apps.writableApp>[0], appId: string) => {
      try {
        return !!apps.writableApp(user, appId);
      } catch {
        return false;
      }
    };
    const tunnels = servers && createTunnelTargets({ servers, canAccess });
    /** Removals of the servers of deleted apps under way (afterDelete does not wait for them): the stop does. */
    const removingLeftovers = new Set<Promise<void>>();

    const units: Unit[] = [
      {
        name: 'addon-servers',
        start: async ({ engineUp }) => void (engineUp && (await servers?.reconcile())),
        async stop() {
          await servers?.idle();
          // The servers of apps a reset just removed go before the emulator does (a container stopped right after
          // `POST /_emulator/reset`, the image's EMULATOR_RESET_ON_STOP, leaves none behind).
          await Promise.all(removingLeftovers);
          servers?.stop();
        },
      },
      {
        name: 'addons',
        routes,
        // The gateways listen again on their ports (TCP_URL unchanged), as the other servers bind theirs.
        open: () => gateways.open(),
        async stop() {
          gateways.stop();
          followers?.closeAll();
          await backups?.idle();
          await dbs.restores?.idle();
        },
      },
    ];
    // After the containers area's hooks: its addon servers, their volumes and the app's network go once the
    // app's containers are gone. A reset or restore removes apps without the deletion path: afterDelete finds
    // what is left by label.
    // afterDelete: a reset or restore removes apps without the deletion path, and runs it too.
    const appHooks: AppHooks[] = [{ afterDelete: (app) => gateways.removeApp(app.id) }];
    if (servers)
      appHooks.push({
        afterCreate: (app) => servers.appCreated(app.id),
        beforeDelete: (app) => servers.removeApp(app.id),
        afterDelete: (app) => {
          const removing = servers
            .removeLeftovers(app.id)
            .catch((err: Error) => {
              logger.warn({ err: err.message }, 'addon servers of a removed app not removed');
            })
            .finally(() => removingLeftovers.delete(removing));
          removingLeftovers.add(removing);
        },
      });
    return { api: { addons, servers, tunnels, store }, units, appHooks };
  },
});
