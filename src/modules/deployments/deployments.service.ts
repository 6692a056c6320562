import { EventEmitter } from 'node:events';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError, DISK_FULL_MESSAGE } from '../../http/errors.ts';
import { type ContainerRuntime } from '../../runtime/runtime.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { defined } from '../../shared/defined.ts';
import { isDiskFull, retryWhileDiskFull } from '../../shared/disk-full.ts';
import { objectId } from '../../shared/ids.ts';
import { type Logger } from '../../shared/logger.ts';
import { type AppRow, type AppsStore } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { assertEngineAvailable, assertNotBeingDeleted } from '../containers/containers.service.ts';
import { type ContainersStore } from '../containers/containers.store.ts';
import { type Orchestrator } from '../containers/orchestrator.ts';
import { StartFailure } from '../containers/start-failure.ts';
import { type EventsService } from '../events/events.service.ts';
import { applyFormation, type BuildReleaseDeps, buildRelease } from './build-release.ts';
import { DeploymentQueue } from './deployment-queue.ts';
import { type DeploymentRow, type DeploymentsStore } from './deployments.store.ts';
import { prepareSource, type Source, type SourceLimits } from './sources.ts';

export const FINISHED = new Set(['success', 'build-error', 'crashed-error', 'timeout-error', 'aborted', 'hook-error']);

/** Live build output and status changes, per app, for the deployments stream. */
export interface DeploymentStreamEvent {
  appId: string;
  deploymentId: string;
  type: 'new' | 'log' | 'status';
  data: Record<string, unknown>;
}

export interface DeploymentsServiceDeps extends BuildReleaseDeps {
  store: DeploymentsStore;
  apps: AppsStore;
  containers: ContainersStore;
  orchestrator: Orchestrator;
  runtime: ContainerRuntime;
  events: EventsService;
  clock: Clock;
  logger: Logger;
  workDir: string;
  /** Limits on archives and git sources, and on the build output kept. */
  sources: SourceLimits & { maxOutputBytes: number };
  instanceId: string;
  userById: (id: string) => UserRow | undefined;
  /** Runs the postdeploy / first-deploy hook of a built release; resolves with its exit code. */
  runHook?: (
    app: AppRow,
    rel: { deploymentId: string; image: string; processTypes: Record<string, string> },
    name: string,
    command: string,
    onLine: (line: string) => void,
  ) => Promise<number>;
  /** A hook's output line, as the app's logs show it (`[postdeploy]`). */
  onHookLine?: (appId: string, name: string, line: string) => void;
  /** Deployments of one app that may wait while one runs (the API's); past it, 409. */
  maxQueuedDeployments?: number;
  /**
   * Resolves once none of the app's addon servers is still starting (they start beside the build);
   * `say` tells the deployment's output what it waits for. Absent: no wait.
   */
  addonsStarted?: (appId: string, say: (line: string) => void) => Promise<void>;
}

/**
 * Deploys code: source → image → containers. The image is built as build-release.ts chooses (a
 * buildpack when one applies, else a Dockerfile, else the stack image with the code and the Procfile). A
 * failed build or start is a failed deployment with its output kept; the running version stays.
 */
export function createDeploymentsService(deps: DeploymentsServiceDeps) {
  const { store, clock, logger } = deps;
  const bus = new EventEmitter();
  bus.setMaxListeners(0);
  const running = new Map<string, Promise<void>>(); // app id → deployment in progress
  const queued = new Map<string, { source: Source; pusher: UserRow | null }>(); // coalesced redeploys (watcher)
  const waiting = new DeploymentQueue(deps.maxQueuedDeployments ?? 10); // deployments posted while one runs
  const building = new Set<string>(); // deployment ids whose builds/<id>/ is in use
  // A build started since the last sweep (true at first: a killed process may have left some).
  let builtSinceSweep = true;

  /** Removes a build directory; again a little later, in case a cut extraction still had a write in flight. */
  async function removeBuildDir(dir: string): Promise<void> {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    setTimeout(() => void rm(dir, { recursive: true, force: true }).catch(() => undefined), 2000).unref();
  }

  function emit(e: DeploymentStreamEvent) {
    bus.emit('event', e);
  }

  async function pipeline(app: AppRow, d: DeploymentRow, source: Source, pusher: UserRow | null): Promise<void> {
    let output = '';
    let truncated = false;
    // The output is bounded (a build may print without end): past the limit, only the step and error lines.
    const say = (line: string) => {
      if (output.length + line.length >= deps.sources.maxOutputBytes && !/^(----->|!)/.test(line)) {
        if (truncated) return;
        truncated = true;
        line = `!      Output truncated: more than ${deps.sources.maxOutputBytes} bytes`;
      }
      output += `${line}\n`;
      emit({ appId: app.id, deploymentId: d.id, type: 'log', data: { content: `${line}\n` } });
    };
    const setStatus = (status: string, extra: Partial<DeploymentRow> = {}) => {
      const row = {
        ...defined(store.byId(d.id), `deployment ${d.id}`),
        ...extra,
        status,
        output,
        finished_at: FINISHED.has(status) ? clock.now() : null,
      };
      store.update(row);
      emit({ appId: app.id, deploymentId: d.id, type: 'status', data: { status } });
      return row;
    };
    const previousStatus = app.status;
    deps.apps.setStatus(app.id, 'booting');
    const workDir = join(deps.workDir, d.id);
    building.add(d.id);
    builtSinceSweep = true;
    let final: DeploymentRow;
    try {
      setStatus('building');
      const context = await prepareSource(source, workDir, say, deps.sources);
      const deployedBefore = Boolean(deps.apps.find(app.id)?.last_deployment_id);
      const { tag, processTypes, hook } = await buildRelease(deps, app, d.id, context, deployedBefore, say);
      say(
        `-----> Process types: ${Object.entries(processTypes)
          .map(([k, v]) => `${k}${v ? ` (${v})` : ''}`)
          .join(', ')}`,
      );
      setStatus('pushing', { image: tag, process_types: JSON.stringify(processTypes) });
      setStatus('starting');
      // Addons provisioned with the app start while it builds: the hook and the new containers find them answering.
      await deps.addonsStarted?.(app.id, say);
      // Before the new version takes traffic (and before the formation changes): a failing hook leaves the running version.
      if (hook && deps.runHook) {
        say(`-----> Running the ${hook.name} hook: ${hook.command}`);
        const code = await deps.runHook(
          app,
          { deploymentId: d.id, image: tag, processTypes },
          hook.name,
          hook.command,
          (l) => {
            say(`       ${l}`);
            deps.onHookLine?.(app.id, hook.name, l);
          },
        );
        if (code !== 0) {
          say(`!      The ${hook.name} hook failed (exit code ${code}): the previous version keeps running`);
          throw Object.assign(new Error(`${hook.name} hook exited with code ${code}`), { status: 'hook-error' });
        }
      }
      applyFormation(deps.containers, app.id, processTypes);
      try {
        await deps.orchestrator.converge(
          deps.apps.find(app.id) ?? app,
          { deploymentId: d.id, image: tag, processTypes },
          (c) => c.deployment_id !== d.id,
        );
      } catch (err) {
        say(`!      Start failed: ${(err as Error).message}`);
        if (err instanceof StartFailure && err.output.length) {
          say('       Its last lines of output:');
          for (const line of err.output) say(`       | ${line}`);
        }
        throw Object.assign(err as Error, {
          status: /within/.test((err as Error).message) ? 'timeout-error' : 'crashed-error',
        });
      }
      say('-----> Application deployed');
      final = setStatus('success');
      deps.apps.markDeployed(app.id, clock.now(), pusher?.username ?? null, d.id);
    } catch (err) {
      const status = (err as { status?: string }).status ?? 'build-error';
      if (isDiskFull(err)) {
        // The build's own files are what filled it, most often: they go before the status is written.
        await removeBuildDir(workDir);
        say(`!      ${DISK_FULL_MESSAGE.replace(': free', ', the build stopped: free')}`);
      } else if (!(err as { status?: string }).status) say(`!      ${(err as Error).message}`);
      final = await retryWhileDiskFull(
        () => {
          const row = setStatus(status);
          deps.apps.markDeployed(app.id, clock.now(), pusher?.username ?? null, null);
          // The running version stays: the app goes back to what it was.
          deps.apps.setStatus(app.id, previousStatus === 'booting' ? 'new' : previousStatus);
          return row;
        },
        logger,
        'the end of a deployment',
      );
    } finally {
      await removeBuildDir(workDir);
      building.delete(d.id);
    }
    if (final.status === 'success') deps.orchestrator.settleStatus(app.id);
    deps.events.record({
      type: 'deployment',
      app,
      user: pusher,
      typeData: {
        deployment_id: d.id,
        deployment_uuid: d.id,
        pusher: pusher?.username ?? '',
        git_ref: d.git_ref ?? '',
        status: final.status,
        duration: Math.round((clock.now() - d.created_at) / 1000),
        deployment_type: source.kind === 'archive' ? 'archive' : 'deployment',
      },
    });
    // Old images go; the current one stays.
    for (const image of deps.store.imagesOf(app.id)) {
      const current = deps.apps.find(app.id)?.last_deployment_id;
      if (current && !image.endsWith(`:${current}`)) await deps.runtime.removeImage(image).catch(() => undefined);
    }
  }

  /** Runs a deployment; when it ends, the app's next queued deployment (or a watcher's coalesced redeploy) starts. */
  function start(app: AppRow, d: DeploymentRow, source: Source, pusher: UserRow | null): void {
    const p = pipeline(app, d, source, pusher)
      .catch((err) => logger.error({ err, deployment: d.id }, 'deployment pipeline failed'))
      .finally(() => {
        running.delete(app.id);
        const fresh = deps.apps.find(app.id);
        if (!fresh || deps.orchestrator.gone(app.id)) {
          for (const q of waiting.drop(app.id))
            store.update({
              ...q.row,
              status: 'aborted',
              output: '!      Aborted: the app was deleted\n',
              finished_at: clock.now(),
            });
          queued.delete(app.id);
          return;
        }
        const next = waiting.next(app.id);
        if (next) return start(fresh, next.row, next.source, next.pusher);
        const redeploy = queued.get(app.id);
        queued.delete(app.id);
        if (redeploy) service.deploy(fresh, redeploy.source, redeploy.pusher);
      });
    running.set(app.id, p);
    // An app deletion waits for its deployment: the image it builds is then removed with the others.
    deps.orchestrator.track(app.id, p);
  }

  const service = {
    bus,
    /** Resolves once no deployment of the app is in progress (those queued behind it included). */
    async appIdle(appId: string): Promise<void> {
      for (let p = running.get(appId); p; p = running.get(appId)) await p;
    },
    /**
     * Starts a deployment; answers at once with it. While another deployment of the app runs, `queue`
     * puts it in the app's line (status `queued`, started in order; 409 past the line's length);
     * without `queue` (a git push, which waits on its own), 409.
     */
    deploy(app: AppRow, source: Source, pusher: UserRow | null, opts: { queue?: boolean } = {}): DeploymentRow {
      const busy = running.has(app.id);
      if (busy && !opts.queue)
        throw new ApiError(409, { error: 'a deployment of this app is already in progress: wait for it to end' });
      if (busy && waiting.isFull(app.id)) {
        throw new ApiError(409, {
          error: `${waiting.max} deployments of this app are already queued: wait for one of them to end`,
        });
      }
      assertNotBeingDeleted(app, deps.orchestrator, deps.apps);
      const d: DeploymentRow = {
        id: objectId(clock.now()),
        app_id: app.id,
        status: 'queued',
        source: source.location,
        source_kind: source.kind,
        git_ref: source.gitRef ?? null,
        image: null,
        process_types: '{}',
        pusher_id: pusher?.id ?? null,
        output: '',
        created_at: clock.now(),
        finished_at: null,
      };
      store.insert(d);
      emit({ appId: app.id, deploymentId: d.id, type: 'new', data: { deployment: d.id } });
      if (busy) waiting.push(app.id, { row: d, source, pusher });
      else start(app, d, source, pusher);
      return d;
    },
    /** The API's deployment: 503 (and no deployment recorded) while the engine cannot be reached. */
    async deployWhenEngine(app: AppRow, source: Source, pusher: UserRow | null): Promise<DeploymentRow> {
      await assertEngineAvailable(deps.runtime);
      const fresh = deps.apps.find(app.id);
      if (!fresh) throw ApiError.notFound('app');
      return service.deploy(fresh, source, pusher, { queue: true });
    },
    /** For watchers: deploy now, or once the running deployment ends (changes coalesce). */
    deploySoon(app: AppRow, source: Source, pusher: UserRow | null): void {
      if (running.has(app.id)) queued.set(app.id, { source, pusher });
      else service.deploy(app, source, pusher);
    },
    inProgress: (appId: string) => running.get(appId),
    /** The app's newest successful deployment: the version its containers run (a failed or stopped one changes nothing). */
    lastSuccess: (appId: string) => store.lastSuccess(appId),
    /**
     * Removes the build directories no deployment uses: at start (left by a killed process) and after
     * an app deletion (its deployments' directories).
     */
    async sweepBuilds(): Promise<number> {
      // Deleting apps that never built (most deletions) reads no directory.
      if (!builtSinceSweep) return 0;
      builtSinceSweep = building.size > 0;
      const names = await readdir(deps.workDir).catch(() => [] as string[]);
      const stale = names.filter((n) => !building.has(n));
      await Promise.all(
        stale.map((n) => rm(join(deps.workDir, n), { recursive: true, force: true }).catch(() => undefined)),
      );
      return stale.length;
    },
    /** Deployments cut by an emulator stop cannot resume: they end `aborted`. */
    abortInterrupted(): void {
      for (const d of store.unfinished())
        store.update({
          ...d,
          status: 'aborted',
          output: `${d.output}!      Interrupted: the emulator stopped during this deployment\n`,
          finished_at: clock.now(),
        });
    },
    async idle(): Promise<void> {
      while (running.size) await Promise.allSettled([...running.values()]);
    },
    toJson(d: DeploymentRow, apiUrl: string, appName: string) {
      const pusher = d.pusher_id ? deps.userById(d.pusher_id) : undefined;
      return {
        id: d.id,
        app_id: d.app_id,
        created_at: isoDate(d.created_at),
        finished_at: isoDate(d.finished_at),
        status: d.status,
        git_ref: d.git_ref,
        type: d.source_kind === 'archive' ? 'archive' : 'deployment',
        image: d.image,
        registry: 'local',
        duration: d.finished_at ? Math.round((d.finished_at - d.created_at) / 1000) : 0,
        pusher: pusher
          ? { id: pusher.id, username: pusher.username, email: pusher.email, fullname: pusher.fullname, flags: {} }
          : null,
        links: { output: `${apiUrl}/v1/apps/${appName}/deployments/${d.id}/output` },
      };
    },
  };
  return service;
}

export type DeploymentsService = ReturnType<typeof createDeploymentsService>;
