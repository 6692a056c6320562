import { randomBytes } from 'node:crypto';
import { type ImageSource } from '../../runtime/registry-images.ts';
import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { type Clock } from '../../shared/clock.ts';
import { defined } from '../../shared/defined.ts';
import { type Logger } from '../../shared/logger.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type VariablesStore } from '../variables/variables.store.ts';
import { kindOfProvider, planMemoryBytes } from './addon-kinds.ts';
import { createAddonLogs } from './addon-logs.ts';
import { createAddonNetworks } from './addon-networks.ts';
import { createAddonServerExec, type RunningServer } from './addon-server-exec.ts';
import { addonServerRemoval } from './addon-server-removal.ts';
import { createAddonProgress, createServerStarter } from './addon-server-start.ts';
import { createAddonSupervisor } from './addon-server-supervisor.ts';
import { type AddonServerRow, type AddonServersStore } from './addon-servers.store.ts';
import { setAddonVariables } from './addon-variables.ts';
import { type AddonRow } from './addons.store.ts';

// Real database servers for the postgresql, mysql and redis addons (issue #15). Each addon gets a
// container of its kind's Debian-built image, its data in a named Docker volume (kept across
// restarts of the server and of the emulator, removed with the addon), a memory limit from its
// plan, an alias on the app's own Docker network — which the app's containers join — and its port
// published on 127.0.0.1 for the host (db-tunnel, psql from the machine). The app gets the
// platform's variables (SCALINGO_POSTGRESQL_URL…) pointing at the alias. Its parts: the app's network
// (addon-networks.ts), starting a server (addon-server-start.ts), keeping it up (addon-server-supervisor.ts),
// its logs (addon-logs.ts), what runs inside it (addon-server-exec.ts) and the app's variables (addon-variables.ts).

export interface AddonServersDeps {
  store: AddonServersStore;
  variables: VariablesStore;
  runtime: ContainerRuntime;
  clock: Clock;
  logger: Logger;
  instanceId: string;
  /** `images.source`: where the server's image comes from when the engine lacks it. */
  imageSource?: ImageSource;
  /** The addon row's status changed (provisioning → running, running → provisioning after an outage, or error). */
  setStatus: (addonId: string, status: string) => void;
  /** The app's containers are replaced so they get the new variables and the network. */
  restartApp: (appId: string) => Promise<void>;
  /** Lines of an addon server's output, for the addon's drains. */
  onLines?: Parameters<typeof createAddonLogs>[0]['onLines'];
  /** A server answers (provisioned, restarted, back from an outage): work that needs it running (PITR's base backup). */
  onRunning?: (row: AddonServerRow) => void;
}

export function createAddonServers(deps: AddonServersDeps) {
  const { store, runtime, logger } = deps;
  const networks = createAddonNetworks(runtime, deps.instanceId);
  const { networkName } = networks;
  const logs = createAddonLogs({ runtime, logger, onLines: deps.onLines });
  const progress = createAddonProgress(logs);
  const startServer = createServerStarter({
    runtime,
    clock: deps.clock,
    instanceId: deps.instanceId,
    imageSource: deps.imageSource,
    networks,
    logs,
    progress,
  });
  const supervisor = createAddonSupervisor({
    store,
    runtime,
    logger,
    instanceId: deps.instanceId,
    progress,
    startServer,
    setStatus: deps.setStatus,
    onRunning: deps.onRunning,
  });
  const { bringUp } = supervisor;
  const removal = addonServerRemoval({
    store,
    runtime,
    logger,
    instanceId: deps.instanceId,
    variables: deps.variables,
    networks,
    logs,
    progress,
    supervisor,
  });

  const running = async (addonId: string): Promise<RunningServer | null> => {
    const row = store.byAddon(addonId);
    const c = row && (await runtime.list({ [LABELS.addonId]: addonId }))[0];
    return row && c && c.state === 'running' ? { row, engineId: c.engineId, address: c.address } : null;
  };
  const exec = createAddonServerExec(runtime, running);

  const service = {
    /** Whether the provider's addons run a real server. */
    provides: (providerId: string) => !!kindOfProvider(providerId),
    /** The app's network, when it has addon servers (its containers join it). */
    networkOf: (appId: string): string | undefined => (store.forApp(appId).length ? networkName(appId) : undefined),
    server: (addonId: string) => store.byAddon(addonId),
    /** An app was just created by this process: it has nothing in Docker until its first addon server. */
    appCreated: networks.appCreated,
    logs,

    /**
     * Records the server and sets the app's variables at once; the server starts in the
     * background (the addon is `provisioning` until it answers, then `running`), then the app's
     * containers restart to get the variables and the network.
     */
    provision(addon: AddonRow, app: AppRow, planName: string): string[] {
      const row = newServerRow(addon, app, planName, deps.instanceId, deps.clock.now());
      row.variables = JSON.stringify(setAddonVariables(deps.variables, row));
      store.insert(row);
      void bringUp(row, { after: () => deps.restartApp(app.id) });
      return JSON.parse(row.variables) as string[];
    },

    /** Why the addon is not running yet (provisioning) or failed (error); undefined once it runs. */
    statusMessage: progress.message,

    /**
     * addons-upgrade: the plan's memory limit. A running server restarts with it, as on the platform (issue 22: the
     * caller shows it `updating` meanwhile); an addon whose server could not start (its image failed to build, say)
     * is provisioned again; one still starting gets the limit in place. Ends `running`, or `error` with the reason.
     */
    async changePlan(addonId: string, planName: string, currentStatus: string): Promise<void> {
      const row = store.byAddon(addonId);
      if (!row) return;
      const bytes = planMemoryBytes(planName);
      store.setMemory(addonId, bytes);
      row.memory_bytes = bytes;
      if (currentStatus === 'error') {
        deps.setStatus(addonId, 'provisioning');
        await bringUp(row, { after: () => deps.restartApp(row.app_id) });
      } else if (currentStatus === 'running') {
        await service.restart(addonId, { change: async (c) => runtime.updateMemory(c, bytes) });
      } else {
        const c = (await runtime.list({ [LABELS.addonId]: addonId }))[0];
        if (c) await runtime.updateMemory(c.engineId, bytes);
      }
    },

    /** The server stopped (`signal` first: SIGINT is PostgreSQL's fast shutdown; then `change` of the stopped container),
     * then brought up again on its volume as any start: `running` once it answers, else `error` with the reason. */
    restart(
      addonId: string,
      opts: { change?: (engineId: string) => Promise<void>; signal?: string } = {},
    ): Promise<void> {
      const row = store.byAddon(addonId);
      if (!row) return Promise.resolve();
      const first = async () => {
        for (const c of await runtime.list({ [LABELS.addonId]: addonId })) {
          if (c.state === 'running' && opts.signal) await runtime.kill(c.engineId, opts.signal).catch(() => undefined);
          if (c.state === 'running') await runtime.stop(c.engineId, 10);
          await opts.change?.(c.engineId);
        }
      };
      return bringUp(row, { first });
    },

    /** The addon row's status, changed as the servers change it (recorded as an addon_updated event). */
    setStatus: (addonId: string, status: string) => deps.setStatus(addonId, status),

    /** Once the start under way (provisioning, a restart) ended, or after `ms` of real time (a request's wait: I/O). */
    async settled(addonId: string, ms: number): Promise<void> {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
      await Promise.race([supervisor.pending(addonId)?.catch(() => undefined), waited]).finally(() =>
        clearTimeout(timer),
      );
    },

    /** At start: every recorded server runs again (re-created on its volume when gone). */
    async reconcile(): Promise<void> {
      await Promise.all(store.all().map((row) => bringUp(row)));
    },

    /** The running server of an addon: its row, container and address (null when not running). */
    running,

    // What runs inside a running server (dumps, backups, restores, users, TLS): addon-server-exec.ts.
    ...exec,

    /** The server reachable as `alias` (its host name on the app's network), if any. */
    byAlias: (alias: string) => store.all().find((r) => r.alias === alias),

    // Removing servers, volumes and networks (addon and app deletion, leftovers, exit): addon-server-removal.ts.
    ...removal,

    idle: supervisor.idle,
    stop(): void {
      supervisor.stop();
      logs.stopAll();
    },
  };
  return service;
}

export type AddonServers = ReturnType<typeof createAddonServers>;

/**
 * The server of a new addon: its container (named after this instance, the kind and the addon id), its alias
 * on the app's network, a database and user named after the addon's resource id, a fresh password, the plan's memory.
 */
export function newServerRow(
  addon: AddonRow,
  app: AppRow,
  planName: string,
  instanceId: string,
  now: number,
): AddonServerRow {
  const spec = defined(kindOfProvider(addon.provider_id), `addon kind of ${addon.provider_id}`);
  const short = addon.id.replace(/^ad-/, '').slice(0, 8);
  const name = addon.resource_id
    .replace(/[^a-z0-9_]/gi, '_')
    .toLowerCase()
    .slice(0, 60);
  return {
    addon_id: addon.id,
    app_id: app.id,
    kind: spec.kind,
    container_name: `scalingo-emu-${instanceId}-addon-${spec.kind}-${short}`,
    alias: `${spec.kind}-${short}`,
    username: name,
    password: randomBytes(18).toString('base64url'),
    database: name,
    memory_bytes: planMemoryBytes(planName),
    variables: '[]',
    created_at: now,
  };
}
