import { randomBytes } from 'node:crypto';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/logger.ts';
import { LABELS, type ContainerRuntime } from '../../runtime/runtime.ts';
import { findRecipe } from '../../runtime/image-recipes.ts';
import { ensureRecipeImage } from '../../runtime/recipe-images.ts';
import type { ImageSource } from '../../runtime/registry-images.ts';
import type { AppRow } from '../apps/apps.store.ts';
import type { VariablesStore } from '../variables/variables.store.ts';
import type { AddonRow } from './addons.store.ts';
import type { AddonServersStore, AddonServerRow } from './addon-servers.store.ts';
import { ADDON_KINDS, kindOfProvider, planMemoryBytes, type AddonKind } from './addon-kinds.ts';
import { createAddonLogs } from './addon-logs.ts';
import { removeAddonVariables, setAddonVariables } from './addon-variables.ts';
import { createAddonServerExec, serverEnv, type RunningServer } from './addon-server-exec.ts';
import { defined } from '../../shared/defined.ts';

// Real database servers for the postgresql, mysql and redis addons (issue #15). Each addon gets a
// container of its kind's Debian-built image, its data in a named Docker volume (kept across
// restarts of the server and of the emulator, removed with the addon), a memory limit from its
// plan, an alias on the app's own Docker network — which the app's containers join — and its port
// published on 127.0.0.1 for the host (db-tunnel, psql from the machine). The app gets the
// platform's variables (SCALINGO_POSTGRESQL_URL…) pointing at the alias.

const READY_TIMEOUT_MS = 180_000;

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
  const pending = new Map<string, Promise<void>>(); // addon id → provisioning under way
  // One creation per network at once: two addons provisioned together would make two networks of one
  // name (Docker's duplicate check is not atomic), which no container can then join.
  const networks = new Map<string, Promise<void>>();
  // Apps this process created that never had a network (hence no addon container, volume or
  // network in Docker: each is made after ensureNetwork). Deleting one of them asks nothing of the
  // engine — three engine calls a deletion otherwise. Apps from before the start or from a restore
  // are not in it, so they get the full sweep.
  const unnetworked = new Set<string>();
  const ensureNetwork = (appId: string): Promise<void> => {
    unnetworked.delete(appId);
    const name = networkName(appId);
    let p = networks.get(name);
    if (!p) {
      p = runtime
        .ensureNetwork(name, { [LABELS.owner]: deps.instanceId, [LABELS.appId]: appId })
        .finally(() => networks.delete(name));
      networks.set(name, p);
    }
    return p;
  };
  const logs = createAddonLogs({ runtime, logger, onLines: deps.onLines });
  // What an addon that is not running is doing or why it failed: its status message (the addon's
  // JSON while provisioning or in error) and a line in its logs, where `logs --addon` shows it.
  const messages = new Map<string, string>();
  const progress = (row: AddonServerRow, text: string) => {
    messages.set(row.addon_id, text);
    logs.note(row.addon_id, row.app_id, text);
  };
  let stopped = false;

  const networkName = (appId: string) => `scalingo-emu-${deps.instanceId}-net-${appId.toLowerCase()}`;
  const labels = (row: AddonServerRow) => ({
    [LABELS.owner]: deps.instanceId,
    [LABELS.appId]: row.app_id,
    [LABELS.addonId]: row.addon_id,
    [LABELS.type]: `addon-${row.kind}`,
  });

  /** Creates (or re-creates, on the same volume) the server container and waits until it answers. */
  async function startServer(row: AddonServerRow): Promise<void> {
    const spec = ADDON_KINDS[row.kind as AddonKind];
    const recipe = defined(findRecipe(spec.recipe), `recipe ${spec.recipe}`);
    // The app's containers join this network as soon as the addon exists: make it before a long image build.
    await ensureNetwork(row.app_id);
    await ensureRecipeImage(runtime, recipe, {
      source: deps.imageSource,
      onStart: (r) =>
        progress(
          row,
          `building the ${r.title} image (first use): the addon is provisioning until it is built and the server answers`,
        ),
      onLine: (l) => logs.note(row.addon_id, row.app_id, `[image] ${l}`),
    });
    progress(row, `starting the ${row.kind} server ${row.container_name}`);
    const existing = (await runtime.list({ [LABELS.addonId]: row.addon_id }))[0];
    let engineId: string;
    if (!existing) {
      const info = await runtime.run({
        name: row.container_name,
        image: recipe.tag,
        cmd: ['sh', '-c', spec.script(row.memory_bytes)],
        env: serverEnv(row),
        labels: labels(row),
        memoryBytes: row.memory_bytes,
        publishPort: spec.port,
        network: networkName(row.app_id),
        networkAliases: [row.alias],
        binds: [`${row.container_name}:${spec.dataDir}`],
      });
      engineId = info.engineId;
    } else {
      engineId = existing.engineId;
      if (existing.state !== 'running') await runtime.start(existing.engineId);
    }
    logs.follow(row.addon_id, row.app_id, engineId);
    const deadline = deps.clock.now() + READY_TIMEOUT_MS;
    for (;;) {
      const r = await runtime.exec(engineId, spec.ready, { env: serverEnv(row) }).catch(() => ({ exitCode: -1 }));
      if (r.exitCode === 0) break;
      const info = await runtime.inspect(engineId);
      if (info?.state !== 'running')
        throw new Error(`the ${row.kind} server stopped (exit code ${info?.exitCode ?? '?'})`);
      if (deps.clock.now() > deadline)
        throw new Error(`the ${row.kind} server did not answer within ${READY_TIMEOUT_MS / 1000} s`);
      await new Promise((ok) => setTimeout(ok, 300));
    }
    messages.delete(row.addon_id);
    logs.note(row.addon_id, row.app_id, `${row.kind} server ${row.container_name} ready`);
  }

  /**
   * Starts the server in the background (after `first`, when given: a restart's stop), the addon `provisioning`
   * or `updating` meanwhile; `running` once it answers (then `after`), `error` at once with the reason (its status
   * message) when it cannot start. One at a time per addon: the addon is pending from the call on, so the
   * supervisor takes a `die` meanwhile for the emulator's own doing, not an outage.
   */
  function bringUp(
    row: AddonServerRow,
    steps: { first?: () => Promise<void>; after?: () => Promise<void> } = {},
  ): Promise<void> {
    const running = pending.get(row.addon_id);
    if (running) return running;
    const p = Promise.resolve()
      .then(() => steps.first?.())
      .then(() => startServer(row))
      .then(async () => {
        if (!store.byAddon(row.addon_id)) return;
        deps.setStatus(row.addon_id, 'running');
        deps.onRunning?.(row);
        await steps.after?.();
      })
      .catch((err: Error) => {
        logger.warn({ addon: row.addon_id, err: err.message }, 'addon server could not start');
        if (!store.byAddon(row.addon_id)) return;
        progress(row, `! the ${row.kind} server could not start: ${err.message}`);
        deps.setStatus(row.addon_id, 'error');
      })
      .finally(() => pending.delete(row.addon_id));
    pending.set(row.addon_id, p);
    return p;
  }

  // A server that stops without the emulator asking (docker kill, a crash, the OOM killer) is
  // started again on its volume, as the platform restarts a database: the addon shows
  // `provisioning` with the reason meanwhile, and its logs and events (addon_updated) say so.
  const removing = new Set<string>(); // addon ids whose server the emulator itself is removing
  const offEvents = runtime.onEvent((e) => {
    const addonId = e.labels[LABELS.addonId];
    if (stopped || e.action !== 'die' || !addonId || e.labels[LABELS.owner] !== deps.instanceId) return;
    if (pending.has(addonId) || removing.has(addonId)) return;
    const row = store.byAddon(addonId);
    if (!row) return;
    progress(
      row,
      `the ${row.kind} server stopped unexpectedly (exit code ${e.exitCode ?? '?'}): restarting it on its data`,
    );
    deps.setStatus(addonId, 'provisioning');
    void bringUp(row);
  });

  async function removeContainersAndVolume(row: AddonServerRow): Promise<void> {
    for (const c of await runtime.list({ [LABELS.addonId]: row.addon_id })) await runtime.remove(c.engineId);
    await runtime.removeVolume(row.container_name);
  }

  const running = async (addonId: string): Promise<RunningServer | null> => {
    const row = store.byAddon(addonId);
    const c = row && (await runtime.list({ [LABELS.addonId]: addonId }))[0];
    return row && c && c.state === 'running'
      ? { row, engineId: c.engineId, host: runtime.publishHost, hostPort: c.hostPort }
      : null;
  };
  const exec = createAddonServerExec(runtime, running);

  async function removeAppServers(appId: string): Promise<void> {
    for (const row of store.forApp(appId)) await service.removeServer(row);
    await runtime
      .removeNetwork(networkName(appId))
      .catch((err: Error) => logger.warn({ err: err.message }, 'app network not removed'));
  }

  const service = {
    /** Whether the provider's addons run a real server. */
    provides: (providerId: string) => !!kindOfProvider(providerId),
    /** The app's network, when it has addon servers (its containers join it). */
    networkOf: (appId: string): string | undefined => (store.forApp(appId).length ? networkName(appId) : undefined),
    server: (addonId: string) => store.byAddon(addonId),
    /** An app was just created by this process: it has nothing in Docker until its first addon server. */
    appCreated: (appId: string) => void unnetworked.add(appId),
    logs,

    /**
     * Records the server and sets the app's variables at once; the server starts in the
     * background (the addon is `provisioning` until it answers, then `running`), then the app's
     * containers restart to get the variables and the network.
     */
    provision(addon: AddonRow, app: AppRow, planName: string): string[] {
      const spec = defined(kindOfProvider(addon.provider_id), `addon kind of ${addon.provider_id}`);
      const short = addon.id.replace(/^ad-/, '').slice(0, 8);
      const name = addon.resource_id
        .replace(/[^a-z0-9_]/gi, '_')
        .toLowerCase()
        .slice(0, 60);
      const row: AddonServerRow = {
        addon_id: addon.id,
        app_id: app.id,
        kind: spec.kind,
        container_name: `scalingo-emu-${deps.instanceId}-addon-${spec.kind}-${short}`,
        alias: `${spec.kind}-${short}`,
        username: name,
        password: randomBytes(18).toString('base64url'),
        database: name,
        memory_bytes: planMemoryBytes(planName),
        variables: '[]',
        created_at: deps.clock.now(),
      };
      row.variables = JSON.stringify(setAddonVariables(deps.variables, row));
      store.insert(row);
      void bringUp(row, { after: () => deps.restartApp(app.id) });
      return JSON.parse(row.variables) as string[];
    },

    /** Why the addon is not running yet (provisioning) or failed (error); undefined once it runs. */
    statusMessage: (addonId: string): string | undefined => messages.get(addonId),

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
      await Promise.race([pending.get(addonId)?.catch(() => undefined), waited]).finally(() => clearTimeout(timer));
    },

    /** The server, its volume and the variables it set, gone (addon deletion; the row may be gone already). */
    async removeServer(row: AddonServerRow): Promise<void> {
      const addonId = row.addon_id;
      await pending.get(addonId)?.catch(() => undefined);
      // Until the row is gone: the server's `die` is the emulator's own doing, not an outage.
      removing.add(addonId);
      messages.delete(addonId);
      logs.unfollow(addonId);
      try {
        await removeContainersAndVolume(row);
        removeAddonVariables(deps.variables, row);
        store.delete(addonId);
      } finally {
        removing.delete(addonId);
      }
    },

    /**
     * Everything of an app's addons, and its network, gone (app deletion, after its containers). An app that never
     * had an addon network (nor servers) needs nothing of the engine: then no promise.
     */
    removeApp(appId: string): Promise<void> | undefined {
      if (unnetworked.has(appId) && !store.forApp(appId).length) return undefined;
      return removeAppServers(appId);
    },

    /**
     * What Docker still holds of a deleted app's addons, found by label (the rows may be gone: a
     * control-plane reset or restore removes apps without the deletion path): servers, volumes, network.
     */
    async removeLeftovers(appId: string): Promise<void> {
      if (unnetworked.delete(appId)) return;
      for (const c of await runtime.list({ [LABELS.owner]: deps.instanceId, [LABELS.appId]: appId })) {
        const addonId = c.labels[LABELS.addonId];
        if (!addonId) continue;
        logs.unfollow(addonId);
        messages.delete(addonId);
        removing.add(addonId);
        await runtime.remove(c.engineId).finally(() => removing.delete(addonId));
        await runtime.removeVolume(c.name);
      }
      await runtime.removeNetwork(networkName(appId)).catch(() => undefined);
    },

    /** docker.stopContainersOnExit: every server stops (kept with its volume; `reconcile` starts it again). */
    async stopServers(): Promise<void> {
      // The emulator is exiting: these stops are its own doing, not outages to restart.
      stopped = true;
      offEvents();
      const running = (await runtime.list({ [LABELS.owner]: deps.instanceId })).filter(
        (c) => c.labels[LABELS.addonId] && c.state === 'running',
      );
      await Promise.all(
        running.map((c) =>
          runtime
            .stop(c.engineId, 10)
            .catch((err: Error) => logger.warn({ container: c.name, err: err.message }, 'addon server not stopped')),
        ),
      );
    },

    /** At start: every recorded server runs again (re-created on its volume when gone). */
    async reconcile(): Promise<void> {
      await Promise.all(store.all().map((row) => bringUp(row)));
    },

    /** The running server of an addon: its row, container and the port published on the runtime's publishHost (null when not running). */
    running,

    // What runs inside a running server (dumps, backups, restores, users, TLS): addon-server-exec.ts.
    ...exec,

    /** The server reachable as `alias` (its host name on the app's network), if any. */
    byAlias: (alias: string) => store.all().find((r) => r.alias === alias),

    async idle(): Promise<void> {
      await Promise.allSettled([...pending.values()]);
    },
    stop(): void {
      stopped = true;
      offEvents();
      logs.stopAll();
    },
  };
  return service;
}

export type AddonServers = ReturnType<typeof createAddonServers>;
