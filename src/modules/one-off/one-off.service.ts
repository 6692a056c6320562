import { type EmulatorConfig } from '../../config/schema.ts';
import { ApiError } from '../../http/errors.ts';
import { parseWith } from '../../http/validate.ts';
import { type ContainerRuntime, ENGINE_UNREACHABLE_MESSAGE, LABELS } from '../../runtime/runtime.ts';
import { type Clock } from '../../shared/clock.ts';
import { objectId, secret } from '../../shared/ids.ts';
import { type Logger } from '../../shared/logger.ts';
import { type AppRow, type AppsStore } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { containerEnv } from '../containers/container-env.ts';
import { assertNotBeingDeleted } from '../containers/containers.service.ts';
import { type ContainerRow, type ContainersStore } from '../containers/containers.store.ts';
import { type Orchestrator, type Release } from '../containers/orchestrator.ts';
import { type EventsService } from '../events/events.service.ts';
import { type OperationsService } from '../operations/operations.service.ts';
import { type OperationRow } from '../operations/operations.store.ts';
import { type VariablesStore } from '../variables/variables.store.ts';
import { type AttachSigner } from './attach-url.ts';
import { killSchema, type RunInput } from './one-off.schemas.ts';
import { type Session, type Sessions } from './one-off.sessions.ts';
import { UPLOAD_DIR, type Upload, uploadsArchive } from './uploads.ts';

export interface OneOffServiceDeps {
  store: ContainersStore;
  apps: AppsStore;
  orchestrator: Orchestrator;
  variables: VariablesStore;
  operations: OperationsService;
  runtime: ContainerRuntime;
  events: EventsService;
  clock: Clock;
  logger: Logger;
  config: Pick<EmulatorConfig, 'oneOff' | 'containerSizes'>;
  instanceId: string;
  signer: AttachSigner;
  sessions: Sessions;
  apiUrl: () => string;
  /** Whether a user may still see an app: an attach URL is checked against it at every use. */
  hasAccess: (userId: string, appId: string) => boolean;
}

/** What an attach URL is used for: attaching and uploading need an unexpired URL. */
export type AttachUse = 'attach' | 'upload' | 'resize' | 'wait';

const unauthorized = (error: string) => new ApiError(401, { error });
const conflict = (error: string) => new ApiError(409, { error });

/** #14–#18: one-off containers, their stop and signals, and what their attach URL gives access to. */
export function createOneOffService(deps: OneOffServiceDeps) {
  const { store, runtime, sessions, clock, orchestrator } = deps;
  const labelOf = (c: ContainerRow) => `${c.type}-${c.type_index}`;
  // Who ran each one-off of this process (attach URLs die with the process: their key is per process).
  const runBy = new Map<string, { userId: string; appId: string }>();
  const NO_LONGER = 'the user this attach URL was given to no longer has access to the application';

  /** A live container of the app by platform id (ps `id`) or label (`one-off-3`, `web-1`). */
  function findContainer(app: AppRow, key: string): ContainerRow {
    const row = store.liveContainers(app.id).find((c) => c.id === key || labelOf(c) === key);
    if (!row) throw ApiError.notFound('container', `${key} is not a running container of the app`);
    return row;
  }

  function checkLimits(app: AppRow): void {
    const { maxPerApp, maxPerAccount } = deps.config.oneOff;
    const live = store.allLiveContainers().filter((c) => c.type === 'one-off');
    if (live.filter((c) => c.app_id === app.id).length >= maxPerApp) {
      throw ApiError.invalid(
        'container',
        `at most ${maxPerApp} one-off containers can run at once per application: stop one (one-off-stop) and retry`,
      );
    }
    const owned = new Set(
      deps.apps
        .all()
        .filter((a) => a.owner_id === app.owner_id)
        .map((a) => a.id),
    );
    if (live.filter((c) => owned.has(c.app_id)).length >= maxPerAccount) {
      throw ApiError.invalid(
        'container',
        `at most ${maxPerAccount} one-off containers can run at once per account: stop one and retry`,
      );
    }
  }

  /** Creates the Docker container of a one-off; detached ones start at once. */
  async function create(
    s: Session,
    app: AppRow,
    rel: Release,
    row: ContainerRow,
    user: UserRow,
    env: Record<string, string>,
  ): Promise<void> {
    const size = orchestrator.sizeOf(row.size);
    const detached = row.detached === 1;
    try {
      const info = await runtime.run(
        {
          name: `scalingo-emu-${deps.instanceId}-${app.name}-${labelOf(row)}-${secret(3)
            .toLowerCase()
            .replace(/[^a-z0-9]/g, 'x')}`,
          image: rel.image,
          cmd: ['sh', '-c', row.command],
          env: containerEnv({
            appName: app.name,
            type: 'one-off',
            index: row.type_index,
            size,
            stack: app.stack_id,
            version: rel.deploymentId,
            appVariables: deps.variables.asEnv(app.id),
            userId: user.id,
            extra: env,
          }),
          // Only a detached one-off's output is merged into the app's logs (spec): an attached one's goes to its terminal.
          labels: {
            ...orchestrator.labelsFor(app, 'one-off', row.type_index, row.id, rel.deploymentId),
            ...(detached ? {} : { [LABELS.terminal]: '1' }),
          },
          memoryBytes: size.memory,
          // The same network as the app's containers: its addon servers answer there.
          network: orchestrator.networkOf(app.id),
          // Attached: a TTY with stdin open, as a terminal needs. Detached: plain stdout/stderr (app logs).
          tty: !detached,
          openStdin: !detached,
        },
        { start: detached },
      );
      store.setEngine(row.id, info.engineId, null, detached ? 'running' : 'booting');
      sessions.created(s, info.engineId);
      if (detached) {
        s.started = true;
        sessions.watch(s);
      }
    } catch (err) {
      store.markDeleted(row.id, clock.now(), 'crashed');
      sessions.failed(s, err as Error);
      throw err;
    }
  }

  return {
    labelOf,

    /** #14 — the container row (booting), its attach URL, and for attached runs the start-one-off operation. */
    async run(
      user: UserRow,
      app: AppRow,
      input: RunInput,
    ): Promise<{ row: ContainerRow; attachUrl: string; operation: OperationRow | null }> {
      // The container is created after the answer: with Docker down, say so now (503) rather than in the operation.
      if (!(await runtime.available())) throw ApiError.unavailable(ENGINE_UNREACHABLE_MESSAGE);
      assertNotBeingDeleted(app, orchestrator, deps.apps); // deleted, or being deleted, during the probe
      const sizeName = input.size || 'M';
      const sizes = deps.config.containerSizes.map((s) => s.name);
      if (!sizes.includes(sizeName))
        throw ApiError.invalid('size', `${sizeName} is not a container size (${sizes.join(', ')})`);
      const rel = orchestrator.release(app);
      if (!rel)
        throw ApiError.badRequest(
          `The application ${app.name} has never been deployed: a one-off container runs the deployed code. ` +
            `Deploy it first (git push, an archive, or a watched directory), then retry.`,
        );
      checkLimits(app);
      const detached = input.detached ?? false;
      // Index and insert in the same tick: concurrent runs never share a label.
      const row: ContainerRow = {
        id: objectId(clock.now()),
        app_id: app.id,
        type: 'one-off',
        type_index: store.nextOneOffIndex(app.id),
        size: sizeName,
        command: input.command,
        engine_id: null,
        state: 'booting',
        host_port: null,
        deployment_id: rel.deploymentId,
        detached: detached ? 1 : 0,
        created_at: clock.now(),
        deleted_at: null,
      };
      store.insertContainer(row);
      // GS EventRunTypeData; there is no session recording, so no audit log (id '', size 0).
      deps.events.record({
        type: 'run',
        app,
        user,
        typeData: { command: input.command, audit_log_id: '', audit_log_size: 0, detached },
      });
      const s = sessions.open(row);
      runBy.set(row.id, { userId: user.id, appId: app.id });
      void s.exit.then(() => runBy.delete(row.id));
      const attachUrl = deps.signer.url(deps.apiUrl(), row.id);
      // The Go CLI always sends TERM, empty when its own is unset: then Docker's default (xterm) applies.
      const env = Object.fromEntries(Object.entries(input.env ?? {}).filter(([k, v]) => !(k === 'TERM' && v === '')));
      // An app deletion waits for the creation, then sweeps the container with the others.
      const creating = orchestrator.track(app.id, create(s, app, rel, row, user, env));
      if (detached) {
        creating.catch((err: Error) =>
          deps.logger.warn(
            { err, app: app.name, container: labelOf(row) },
            'one-off: detached container could not start',
          ),
        );
        return { row, attachUrl, operation: null };
      }
      // The Go CLI polls this operation and attaches to start_one_off_data.attach_url once done.
      const operation = deps.operations.start(app.id, 'start-one-off', async (op) => {
        await creating;
        deps.operations.setData(op.id, { start_one_off_data: { attach_url: attachUrl, container_id: row.id } });
      });
      return { row, attachUrl, operation };
    },

    /** #15 — one-off containers only; `stopping`, then Docker's normal shutdown (SIGTERM, grace, SIGKILL). */
    stop(_user: UserRow, app: AppRow, key: string): void {
      const row = findContainer(app, key);
      if (row.type !== 'one-off')
        throw ApiError.badRequest(
          `${labelOf(row)} is a ${row.type} container: only one-off containers can be stopped (scale the app to stop the others)`,
        );
      if (row.state === 'stopping') return;
      store.setState(row.id, 'stopping');
      // No timeline event: the platform has no type for a one-off stop (go-scalingo events_structs.go).
      const s = sessions.get(row.id) ?? adopt(row);
      void sessions
        .shutdown(s)
        .catch((err: Error) => deps.logger.warn({ err, container: row.id }, 'one-off: could not stop the container'));
    },

    /** #16 — SIGUSR1 or SIGUSR2 delivered to the container's process (any running container). */
    async kill(_user: UserRow, app: AppRow, key: string, body: unknown): Promise<void> {
      let row = findContainer(app, key);
      const { signal } = parseWith(killSchema(), body);
      // An attached one-off is `booting` until the engine's start call returns, which its first output can precede.
      const starting = row.state === 'booting' ? sessions.get(row.id)?.starting : undefined;
      if (starting) {
        await starting.catch(() => undefined);
        row = findContainer(app, key);
      }
      if (row.state !== 'running' || !row.engine_id)
        throw ApiError.badRequest(`${labelOf(row)} is ${row.state}, not running: no signal can be delivered`);
      await runtime.kill(row.engine_id, signal);
      // No timeline event: the platform has no type for a signal (go-scalingo events_structs.go).
    },

    /**
     * The session an attach URL designates. Attaching and uploading need an unexpired URL and a
     * container still there; resizing and `/wait` also take an expired one once a terminal attached
     * (a session can outlive the URL's lifetime).
     */
    byToken(token: string, use: AttachUse): Session {
      const check = deps.signer.check(token);
      if (!check.ok) throw unauthorized('invalid attach URL: ask for a new one with a new run');
      const row = store.container(check.containerId);
      const s = sessions.get(check.containerId) ?? (row && row.deleted_at === null ? adopt(row) : undefined);
      if (!s) throw ApiError.notFound('container', 'the one-off container of this attach URL has ended');
      const by = runBy.get(check.containerId);
      if (by && !deps.hasAccess(by.userId, by.appId)) throw unauthorized(NO_LONGER);
      if (check.expired && (use === 'attach' || use === 'upload' || !s.attached))
        throw unauthorized('this attach URL has expired: run the command again');
      if (use === 'wait' || use === 'resize') return s;
      if (s.exited || s.stopping)
        throw ApiError.notFound('container', 'the one-off container of this attach URL has ended');
      if (use === 'attach' && s.attached) throw conflict('a terminal is already attached to this one-off container');
      if (use === 'upload' && s.attached)
        throw conflict(
          'files must be uploaded before attaching: a terminal is already attached to this one-off container',
        );
      if (s.detached) throw conflict('this one-off container runs detached: it takes no terminal or uploads');
      // Claimed in the same tick as the checks: two terminals racing never both get it.
      if (use === 'attach') s.attached = true;
      return s;
    },

    /** #17 — kept until the container starts, applied at once when it runs. */
    async resize(s: Session, width: number, height: number): Promise<void> {
      s.size = { width, height };
      if (s.started && !s.exited && s.engineId) await runtime.resize(s.engineId, width, height).catch(() => undefined);
    },

    /** #18 — into /tmp/uploads (created when missing). */
    async upload(s: Session, files: Upload[]): Promise<void> {
      const engineId = await s.ready;
      await runtime.putArchive(engineId, '/', await uploadsArchive(files, new Date(clock.now())));
      deps.logger.debug(
        { container: s.containerId, files: files.map((f) => f.name), dir: UPLOAD_DIR },
        'one-off: files uploaded',
      );
    },

    /** `GET <attach_url>/wait`: the exit code; 408 when the terminal was closed for inactivity (the CLI's message). */
    async wait(s: Session): Promise<{ exit_code: number }> {
      const code = await s.exit;
      if (s.idleClosed) throw new ApiError(408, { error: 'Connection timed out due to inactivity, one-off aborted.' });
      return { exit_code: code };
    },

    /**
     * At start, after reconciliation: detached one-offs still running are watched again; attached ones
     * lost their terminal with the previous process, so they are stopped like any abandoned terminal.
     */
    async resume(): Promise<void> {
      for (const row of store.allLiveContainers().filter((c) => c.type === 'one-off' && !sessions.get(c.id))) {
        const s = adopt(row);
        if (row.detached) continue;
        store.setState(row.id, 'stopping');
        void sessions.shutdown(s, { hangup: true }).catch(() => undefined);
      }
    },

    /** The terminals of one-offs run by users who lost access to the app are closed (their containers stop). */
    revoke(appId: string): void {
      for (const [containerId, by] of runBy) {
        if (by.appId !== appId || deps.hasAccess(by.userId, appId)) continue;
        sessions.get(containerId)?.closeTerminal?.({ reason: NO_LONGER });
      }
    },

    /** Emulator stop: terminals close; their containers go, as when a terminal goes away. */
    async close(): Promise<void> {
      const open = sessions.all().filter((s) => !s.exited && !s.detached && s.attached);
      for (const s of open) {
        s.stopping = true;
        store.markDeleted(s.containerId, clock.now());
      }
      sessions.close();
      for (const s of open) s.closeTerminal?.({ reason: 'the emulator is stopping' });
      await Promise.all(open.map((s) => (s.engineId ? runtime.remove(s.engineId).catch(() => undefined) : undefined)));
    },
  };

  /** A session for a container created by an earlier process (or before a restart): watched until it ends. */
  function adopt(row: ContainerRow): Session {
    const s = sessions.open(row);
    if (row.engine_id && row.state !== 'booting') {
      s.started = true;
      sessions.watch(s);
    }
    return s;
  }
}

export type OneOffService = ReturnType<typeof createOneOffService>;
