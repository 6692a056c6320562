import { type ContainerSize, type EmulatorConfig } from '../../config/schema.ts';
import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { type Clock } from '../../shared/clock.ts';
import { objectId, secret } from '../../shared/ids.ts';
import { type Logger } from '../../shared/logger.ts';
import { type AppRow, type AppsStore } from '../apps/apps.store.ts';
import { type DeploymentsStore } from '../deployments/deployments.store.ts';
import { type EventsService } from '../events/events.service.ts';
import { type VariablesStore } from '../variables/variables.store.ts';
import { containerEnv, listensOnPort, WEB_PORT } from './container-env.ts';
import { type ContainerRow, type ContainersStore } from './containers.store.ts';
import { watchCrashes } from './crash-restarts.ts';
import { waitReady } from './wait-ready.ts';

/** What runs: a successful deployment's image and process types. */
export interface Release {
  deploymentId: string;
  image: string;
  processTypes: Record<string, string>;
}

export interface OrchestratorDeps {
  runtime: ContainerRuntime;
  store: ContainersStore;
  apps: AppsStore;
  deployments: DeploymentsStore;
  variables: VariablesStore;
  events: EventsService;
  clock: Clock;
  logger: Logger;
  config: Pick<EmulatorConfig, 'containerSizes' | 'intervals'>;
  instanceId: string;
  /** A signed logs URL of the app, narrowed to one container (crash events' `logs_url`). */
  logsUrl?: (app: AppRow, container: string) => string;
  /** The app's Docker network shared with its addon servers, when it has some (issue #15). */
  networkOf?: (appId: string) => string | undefined;
}

/**
 * Makes Docker match the platform's intent: starts, replaces and stops an app's containers,
 * restarts crashed ones with back-off, and keeps the containers table in step with the engine.
 */
export function createOrchestrator(deps: OrchestratorDeps) {
  const { runtime, store, clock, logger } = deps;
  const t = deps.config.intervals;
  const readiness = { runtime, clock, intervals: t };

  const sizeOf = (name: string): ContainerSize =>
    deps.config.containerSizes.find((s) => s.name === name) ??
    deps.config.containerSizes.find((s) => s.name === 'M') ??
    deps.config.containerSizes[0];

  function release(app: AppRow): Release | null {
    if (!app.last_deployment_id) return null;
    const d = deps.deployments.byId(app.last_deployment_id);
    if (!d?.image) return null;
    return { deploymentId: d.id, image: d.image, processTypes: JSON.parse(d.process_types) as Record<string, string> };
  }

  // Apps being deleted: nothing starts for them any more, and the deletion waits for the work under
  // way that may create containers or images (converges, starts, deployments, one-off creations)
  // before it sweeps the engine. An id stays in `removing` until the row is gone (forgetRemoved).
  const removing = new Set<string>();
  const work = new Map<string, Set<Promise<unknown>>>();
  const gone = (appId: string) => removing.has(appId) || !deps.apps.find(appId);

  /** Registers work that may create containers or images for an app: a deletion waits for it. */
  function track<T>(appId: string, p: Promise<T>): Promise<T> {
    let jobs = work.get(appId);
    if (!jobs) work.set(appId, (jobs = new Set()));
    const set = jobs;
    set.add(p);
    const untrack = () => {
      set.delete(p);
      if (!set.size && work.get(appId) === set) work.delete(appId);
    };
    p.then(untrack, untrack);
    return p;
  }
  const appGone = (app: AppRow) => new Error(`app ${app.name} was deleted while its containers started`);

  /** Runs work that creates containers for an app, unless the app is gone; a deletion waits for it. */
  function forApp<T>(app: AppRow, run: () => Promise<T>): Promise<T> {
    return gone(app.id) ? Promise.reject(appGone(app)) : track(app.id, run());
  }

  /** Starts one container of a type and waits until it is ready. The row is `booting` meanwhile. */
  function startOne(app: AppRow, rel: Release, type: string, index: number, size: string): Promise<ContainerRow> {
    return forApp(app, () => startTracked(app, rel, type, index, size));
  }

  async function startTracked(
    app: AppRow,
    rel: Release,
    type: string,
    index: number,
    size: string,
  ): Promise<ContainerRow> {
    const command = rel.processTypes[type] ?? '';
    const row: ContainerRow = {
      id: objectId(clock.now()),
      app_id: app.id,
      type,
      type_index: index,
      size,
      command,
      engine_id: null,
      state: 'booting',
      host_port: null,
      deployment_id: rel.deploymentId,
      detached: 0,
      created_at: clock.now(),
      deleted_at: null,
    };
    store.insertContainer(row);
    const sz = sizeOf(size);
    try {
      const info = await runtime.run({
        name: `scalingo-emu-${deps.instanceId}-${app.name}-${type}-${index}-${secret(3)
          .toLowerCase()
          .replace(/[^a-z0-9]/g, 'x')}`,
        image: rel.image,
        cmd: command ? ['sh', '-c', command] : undefined,
        env: containerEnv({
          appName: app.name,
          type,
          index,
          size: sz,
          stack: app.stack_id,
          version: rel.deploymentId,
          appVariables: deps.variables.asEnv(app.id),
        }),
        labels: labelsFor(app, type, index, row.id, rel.deploymentId),
        memoryBytes: sz.memory,
        publishPort: listensOnPort(type) ? WEB_PORT : undefined,
        network: deps.networkOf?.(app.id),
      });
      // The containers table keeps the port of the container's address (reach.ts): runtime.addressOf gives the rest.
      const port = info.address?.port ?? null;
      store.setEngine(row.id, info.engineId, port, 'booting');
      if (removing.has(app.id)) throw appGone(app);
      await waitReady(readiness, {
        label: `${type}-${index}`,
        type,
        engineId: info.engineId,
        address: info.address,
        checkKept: () => {
          if (removing.has(app.id)) throw new Error(`container ${type}-${index}: its app is being deleted`);
        },
      });
      // The router switches now, to the port that answered the probe (the start's inspect gave it).
      store.setEngine(row.id, info.engineId, port, 'running');
      const started: ContainerRow = { ...row, engine_id: info.engineId, host_port: port, state: 'running' };
      crashes.started(started);
      return started;
    } catch (err) {
      const engineId = store.container(row.id)?.engine_id;
      if (engineId) crashes.startFailed(engineId);
      if (engineId) await runtime.remove(engineId).catch(() => undefined);
      store.markDeleted(row.id, clock.now(), 'crashed');
      throw err;
    }
  }

  /** Stops a container the normal way (SIGTERM, grace, SIGKILL) and removes it. */
  async function stopOne(row: ContainerRow, graceSeconds = t.stopGraceSeconds): Promise<void> {
    store.setState(row.id, 'stopping');
    if (row.engine_id) {
      await runtime.stop(row.engine_id, graceSeconds);
      await runtime.remove(row.engine_id);
    }
    store.markDeleted(row.id, clock.now());
  }

  function labelsFor(
    app: AppRow,
    type: string,
    index: number,
    containerId: string,
    deploymentId: string | null,
  ): Record<string, string> {
    return {
      [LABELS.instance]: deps.instanceId,
      [LABELS.appId]: app.id,
      [LABELS.appName]: app.name,
      [LABELS.type]: type,
      [LABELS.index]: String(index),
      [LABELS.containerId]: containerId,
      ...(deploymentId ? { [LABELS.deploymentId]: deploymentId } : {}),
    };
  }

  /**
   * Converges an app's containers on its formation and release. Containers matching `replace`
   * (or of a changed size) are replaced by new ones, started before the old ones stop; any start
   * failure stops what this call started and throws, leaving the previous containers running.
   */
  function converge(app: AppRow, rel: Release, replace: (row: ContainerRow) => boolean = () => false): Promise<void> {
    return forApp(app, () => convergeTracked(app, rel, replace));
  }

  async function convergeTracked(app: AppRow, rel: Release, replace: (row: ContainerRow) => boolean): Promise<void> {
    const formation = store.formation(app.id);
    const live = store.liveContainers(app.id).filter((c) => c.type !== 'one-off');
    const started: ContainerRow[] = [];
    const retire: ContainerRow[] = [];
    try {
      for (const f of formation) {
        const ofType = live.filter((c) => c.type === f.type);
        const jobs: Promise<ContainerRow>[] = [];
        for (let index = 1; index <= f.amount; index++) {
          const current = ofType.find((c) => c.type_index === index);
          if (current && current.state === 'running' && current.size === f.size && !replace(current)) continue;
          if (current) retire.push(current);
          jobs.push(startOne(app, rel, f.type, index, f.size));
        }
        retire.push(...ofType.filter((c) => c.type_index > f.amount));
        const results = await Promise.allSettled(jobs);
        for (const r of results) if (r.status === 'fulfilled') started.push(r.value);
        const failed = results.find((r) => r.status === 'rejected');
        if (failed) throw (failed as PromiseRejectedResult).reason;
      }
      retire.push(...live.filter((c) => !formation.some((f) => f.type === c.type)));
    } catch (err) {
      await Promise.all(started.map((c) => stopOne(c, 1).catch(() => undefined)));
      throw err;
    }
    if (removing.has(app.id)) return; // the deletion's sweep removes them all, without a grace period
    await Promise.all(
      retire.map((c) =>
        stopOne(c).catch((e) => logger.warn({ err: e, container: c.id }, 'could not stop a container')),
      ),
    );
    deps.apps.resetCrashes(app.id);
  }

  /** running when a container runs, stopped when none does (after a deployment), new before any. */
  function settleStatus(appId: string): void {
    const app = deps.apps.find(appId);
    if (!app || app.status === 'crashed') return;
    const running = store
      .liveContainers(appId)
      .some((c) => c.type !== 'one-off' && (c.state === 'running' || c.state === 'booting'));
    deps.apps.setStatus(appId, running ? 'running' : app.last_deployment_id ? 'stopped' : 'new');
  }

  const crashes = watchCrashes({
    ...deps,
    intervals: t,
    sizeOf,
    release,
    startOne,
    gone,
    removing: (appId) => removing.has(appId),
  });

  /** removeApp's work when the app has containers, images or work under way (the engine is asked). */
  async function removeFromEngine(app: AppRow): Promise<void> {
    removing.add(app.id);
    try {
      // Work under way (start-up reconciliation, a scale, a deployment, a one-off creation) ends
      // first: nothing new starts meanwhile, and each start removes what it made.
      for (let jobs = work.get(app.id); jobs?.size; jobs = work.get(app.id)) await Promise.allSettled([...jobs]);
      // Nothing ever ran or was built for it: no need to ask the engine (reconciliation removes strays).
      // (No deployment row: no image either, allImagesOf's two reads answer nothing.)
      if (!store.liveContainers(app.id).length && deps.deployments.count(app.id) === 0) return;
      for (const row of store.liveContainers(app.id)) store.setState(row.id, 'stopping');
      const filter = { [LABELS.instance]: deps.instanceId, [LABELS.appId]: app.id };
      // A removal already under way elsewhere answers 409 at once: list again until none is left.
      for (let round = 0; round < 40; round++) {
        const left = await runtime.list(filter);
        if (!left.length) break;
        if (round) await sleep(250);
        await Promise.all(left.map((c) => runtime.remove(c.engineId)));
      }
      for (const image of deps.deployments.allImagesOf(app.id)) await runtime.removeImage(image);
    } catch (err) {
      removing.delete(app.id); // the app stays: it may start containers again
      throw err;
    }
  }

  return {
    networkOf: (appId: string) => deps.networkOf?.(appId),
    sizeOf,
    release,
    converge,
    startOne,
    stopOne,
    settleStatus,
    labelsFor,

    /**
     * Every container and image of an app, gone (app deletion). Call forgetRemoved once the row is deleted. An app
     * with no work under way that never ran nor was built needs nothing of the engine: then no promise (the deletion
     * stays synchronous, src/modules/apps/app-deletion.ts); a failure of those reads throws.
     */
    removeApp(app: AppRow): Promise<void> | undefined {
      if (!work.get(app.id)?.size && !store.liveContainers(app.id).length && deps.deployments.count(app.id) === 0) {
        removing.add(app.id);
        return undefined;
      }
      return removeFromEngine(app);
    },

    /** The app row is deleted (or its deletion failed): its id leaves the set of apps being removed. */
    forgetRemoved(appId: string): void {
      removing.delete(appId);
    },

    track,
    markOom: crashes.markOom, // its next exit is an OOM kill (control plane)
    /** True while the app is being deleted, and once its row is gone: nothing may start for it. */
    gone,

    /**
     * At start: Docker and the database are compared. Containers the database expects but Docker
     * lost are recreated, engine containers nobody expects (orphans) are removed, states updated.
     */
    async reconcile(): Promise<{ recreated: number; orphansRemoved: number }> {
      let recreated = 0;
      let orphansRemoved = 0;
      const engine = await runtime.list({ [LABELS.instance]: deps.instanceId });
      const known = new Set<string>();
      for (const row of store.allLiveContainers()) {
        const info = engine.find((e) => e.engineId === row.engine_id);
        if (info && info.state === 'running') {
          known.add(info.engineId);
          const port = info.address?.port ?? null;
          store.setEngine(row.id, info.engineId, port, row.state === 'stopping' ? 'stopping' : 'running');
        } else {
          store.markDeleted(row.id, clock.now(), row.type === 'one-off' ? 'stopped' : 'crashed');
        }
      }
      for (const e of engine) {
        if (known.has(e.engineId)) continue;
        await runtime.remove(e.engineId);
        orphansRemoved++;
      }
      for (const listed of deps.apps.all()) {
        // Re-read: the API serves requests meanwhile, and an app may be deleted or changed.
        const app = deps.apps.find(listed.id);
        if (!app || removing.has(app.id)) continue;
        const rel = release(app);
        if (!rel || app.status === 'crashed') {
          if (app.status === 'booting' || app.status === 'scaling' || app.status === 'restarting') settleStatus(app.id);
          continue;
        }
        const before = store.liveContainers(app.id).length;
        try {
          await converge(app, rel);
        } catch (err) {
          logger.warn({ app: app.name, err: (err as Error).message }, 'reconciliation could not start a container');
        }
        recreated += Math.max(0, store.liveContainers(app.id).length - before);
        settleStatus(app.id);
      }
      return { recreated, orphansRemoved };
    },

    /** Containers of this instance stop (config docker.stopContainersOnExit). */
    async stopAll(): Promise<void> {
      const all = await runtime.list({ [LABELS.instance]: deps.instanceId });
      for (const row of store.allLiveContainers()) store.setState(row.id, 'stopping');
      await Promise.all(all.map((c) => runtime.stop(c.engineId, 2).then(() => runtime.remove(c.engineId))));
      for (const row of store.allLiveContainers()) store.markDeleted(row.id, clock.now());
    },

    /** No more reactions to the engine: pending crash restarts are cancelled. */
    close: crashes.close,
  };
}

export type Orchestrator = ReturnType<typeof createOrchestrator>;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
