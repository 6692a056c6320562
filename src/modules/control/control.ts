// The control plane as an object (`emu.area('control').control`): reset, snapshots, faults and the clock. The
// HTTP routes (/_emulator/*) and the programmatic API both call it, so they behave the same.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { type EmulatorConfig } from '../../config/schema.ts';
import { type Db } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { parseWith } from '../../http/validate.ts';
import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { type Clock, ManualClock } from '../../shared/clock.ts';
import { type Logger } from '../../shared/logger.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type AuthService, STARTUP_TOKEN_NAME } from '../auth/auth.service.ts';
import { type ContainersStore } from '../containers/containers.store.ts';
import { type Orchestrator } from '../containers/orchestrator.ts';
import { type FaultInput, faultSchema, withImpliedType } from './control.schemas.ts';
import { createControlStore } from './control.store.ts';
import { type FaultJson, type Faults, type StoredFault } from './faults.ts';
import { createSnapshots, snapshotJson } from './snapshots.ts';

export interface ControlDeps {
  config: EmulatorConfig;
  db: Db;
  clock: Clock;
  logger: Logger;
  /** The runtime as the areas see it (faults applied). */
  runtime: ContainerRuntime;
  instanceId: string;
  dataDir: string | null;
  stateDir: string;
  faults: Faults;
  apps: AppsService;
  auth: AuthService;
  orchestrator: Orchestrator;
  containers: ContainersStore;
  /** The start-up token printed for the first user: it keeps working across resets and restores. */
  startupToken: string;
  /** Directory of the logs archives (files named `<app id>-…`). */
  archivesDir: string;
  /** Called once rows were replaced: areas drop what they hold for rows that are gone (drains, orphans). */
  afterStateReplaced?: () => void;
}

export function createControl(deps: ControlDeps) {
  const { db, clock, logger, runtime, orchestrator } = deps;
  const store = createControlStore(db);
  const snapshots = createSnapshots({ db, store, clock, dataDir: deps.dataDir, stateDir: deps.stateDir });

  /** Archive files whose rows are gone (or every file), and rows whose file is gone (a restored snapshot). */
  function tidyArchives(appIds: string[] | 'all' | 'restored'): void {
    if (appIds === 'restored') {
      for (const a of store.archives()) if (!existsSync(join(deps.archivesDir, a.file))) store.dropArchive(a.id);
      return;
    }
    if (!existsSync(deps.archivesDir)) return;
    for (const f of readdirSync(deps.archivesDir)) {
      if (appIds === 'all' || appIds.some((id) => f.startsWith(`${id}-`)))
        rmSync(join(deps.archivesDir, f), { force: true });
    }
  }

  /** The caches of the areas forget rows that changed underneath; configured users and the start-up token are there. */
  function settle(): void {
    deps.auth.forgetAll();
    deps.auth.syncUsers(deps.config.users);
    const first = deps.auth.userByLogin(deps.config.users[0].username);
    if (first && !deps.config.users[0].apiTokens.includes(deps.startupToken))
      deps.auth.ensureToken(first.id, STARTUP_TOKEN_NAME, deps.startupToken);
    deps.afterStateReplaced?.();
  }

  async function removeApps(ids: string[]): Promise<AppRow[]> {
    const rows = ids.map((id) => deps.apps.find(id)).filter((a) => !!a);
    // Containers (one-offs included) and images leave the engine first; apps with none cost no engine call.
    // async: a removal that throws before it waits on anything counts as a rejection too.
    const results = await Promise.allSettled(rows.map(async (a) => orchestrator.removeApp(a)));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) {
      for (const a of rows) orchestrator.forgetRemoved(a.id);
      throw (failed as PromiseRejectedResult).reason;
    }
    return rows;
  }

  async function reset(opts: { user?: string } = {}): Promise<void> {
    if (opts.user) {
      const user = deps.auth.userByLogin(opts.user);
      if (!user || user.id === 'us-scalingo-platform')
        throw ApiError.notFound('user', `${opts.user} is not a user of the emulator`);
      const ids = store.appIdsOf(user.id);
      const rows = await removeApps(ids);
      store.deleteApps(ids);
      for (const a of rows) deps.apps.removedElsewhere(a); // git repositories, build dirs, the orchestrator's bookkeeping
      tidyArchives(ids);
      deps.auth.forgetAll();
      deps.afterStateReplaced?.();
      return;
    }
    const ids = store.appIds();
    const hadContainers = store.liveContainers() > 0;
    const rows = await removeApps(ids);
    // Anything of this instance the rows did not know of (a container being created, a stray).
    if (hadContainers)
      for (const c of await runtime.list({ [LABELS.instance]: deps.instanceId }))
        await runtime.remove(c.engineId).catch(() => undefined);
    store.wipeAll();
    for (const a of rows) deps.apps.removedElsewhere(a);
    tidyArchives('all');
    deps.faults.clear();
    deps.auth.forgetAll();
    deps.afterStateReplaced?.();
  }

  /** Copies a snapshot's rows in, then brings Docker in line: containers recreated or removed so ps = Docker. */
  async function restore(idOrData: string | Uint8Array, opts: { reconcile?: boolean } = {}): Promise<void> {
    const data =
      typeof idOrData === 'string'
        ? snapshots.data(idOrData)
        : Buffer.isBuffer(idOrData)
          ? idOrData
          : Buffer.from(idOrData);
    const checked = await snapshots.check(data);
    // What the state held right before its rows are replaced (requests went on while the file was checked).
    const imagesBefore = store.images();
    const appsBefore = store
      .appIds()
      .map((id) => deps.apps.find(id))
      .filter((a) => !!a);
    checked.replaceRows();
    for (const a of appsBefore) if (!deps.apps.find(a.id)) deps.apps.removedElsewhere(a);
    tidyArchives('restored');
    settle();
    if (opts.reconcile === false) return;
    const engine = await runtime.probe();
    if (!engine.ok) {
      logger.warn(
        { error: engine.error },
        'snapshot restored; Docker unavailable: containers are reconciled at the next start',
      );
      return;
    }
    const r = await orchestrator.reconcile();
    // Images built since the snapshot for deployments it does not know: their containers are gone, they go too.
    const kept = store.images();
    for (const image of imagesBefore)
      if (!kept.has(image))
        await runtime
          .removeImage(image)
          .catch((err: Error) => logger.warn({ image, err: err.message }, 'could not remove an image'));
    logger.info(r, 'snapshot restored and reconciled with Docker');
  }

  async function workload(spec: Extract<FaultInput, { type: 'crash' | 'oom' }>): Promise<void> {
    const app = deps.apps.find(spec.app);
    if (!app) throw ApiError.notFound('app');
    const [, type, index] = /^(.+)-(\d+)$/.exec(spec.container) ?? [];
    const row = deps.containers.liveContainers(app.id).find((c) => c.type === type && c.type_index === Number(index));
    if (!row?.engine_id || row.state !== 'running')
      throw ApiError.notFound('container', `${spec.container} is not a running container of ${app.name}`);
    if (spec.type === 'oom') orchestrator.markOom(row.engine_id);
    // SIGKILL, as the kernel's OOM killer does; for `crash` too: PID 1 of a container ignores the
    // signals it has no handler for, SIGKILL always ends it (exit code 137).
    await runtime.kill(row.engine_id, 'SIGKILL');
  }

  const faults = {
    /** Validates and applies a fault (as the API's `fault` object); crash and oom act at once and are not kept. */
    async add(input: FaultInput | unknown): Promise<FaultJson> {
      const spec = parseWith(z.object({ fault: faultSchema() }), { fault: withImpliedType(input) }, 'fault').fault;
      if (spec.type === 'crash' || spec.type === 'oom') {
        await workload(spec);
        return deps.faults.json(deps.faults.once(spec));
      }
      return deps.faults.json(deps.faults.add(spec as StoredFault));
    },
    list: (): FaultJson[] => deps.faults.list().map(deps.faults.json),
    remove(id: string): void {
      if (!deps.faults.remove(id)) throw ApiError.notFound('fault');
    },
    clear: () => deps.faults.clear(),
  };

  const manual = clock instanceof ManualClock ? clock : null;
  const clockControl = {
    mode: (manual ? 'manual' : 'system') as 'manual' | 'system',
    now: () => clock.now(),
    /** Moves a manual clock: every timer falling due fires, in order. 422 with the system clock. */
    advance(ms: number): void {
      if (!manual)
        throw ApiError.invalid(
          'clock',
          'the emulator runs on the system clock: start it with "clock": "manual" to move time',
        );
      if (!Number.isInteger(ms) || ms <= 0)
        throw ApiError.invalid('ms', 'must be a whole number of milliseconds, more than 0');
      manual.advance(ms);
    },
  };

  return {
    reset,
    /** A snapshot of the state now, kept by the emulator: `{id, created_at, size}` as the API shows it. */
    snapshot: () => snapshotJson(snapshots.create()),
    snapshots,
    restore,
    /** Starts from a snapshot file (--import): rows only, the start-up reconciliation does Docker. */
    async importFile(file: string): Promise<void> {
      let data: Buffer;
      try {
        data = readFileSync(file);
      } catch (err) {
        throw new Error(`cannot read the snapshot to import (${file}): ${(err as Error).message}`);
      }
      try {
        (await snapshots.check(data)).replaceRows();
      } catch (err) {
        if (err instanceof ApiError)
          throw new Error(
            `cannot import ${file}: ${
              Object.values((err.body as { errors: Record<string, string[]> }).errors ?? {})
                .flat()
                .join(', ') || err.message
            }`,
          );
        throw err;
      }
      tidyArchives('restored');
      settle();
    },
    /** --export-on-exit: the state now, as a snapshot file. */
    exportTo(file: string): void {
      writeFileSync(file, snapshots.serialize());
    },
    faults,
    clock: clockControl,
  };
}

export type Control = ReturnType<typeof createControl>;
