import { type ContainerSize, type EmulatorConfig } from '../../config/schema.ts';
import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { type Clock, type ClockTimer } from '../../shared/clock.ts';
import { type Logger } from '../../shared/logger.ts';
import { type AppRow, type AppsStore } from '../apps/apps.store.ts';
import { type EventsService } from '../events/events.service.ts';
import { type ContainerRow, type ContainersStore } from './containers.store.ts';
import { type Release } from './orchestrator.ts';
import { lastOutputLines } from './start-failure.ts';

// Platform rule: more than 12 crashes in a row and the app is `crashed`, no more restarts.
export const MAX_CRASHES_IN_A_ROW = 12;

export interface CrashRestartsDeps {
  runtime: ContainerRuntime;
  store: ContainersStore;
  apps: AppsStore;
  events: EventsService;
  clock: Clock;
  logger: Logger;
  intervals: Pick<EmulatorConfig['intervals'], 'crashBackoffMs' | 'crashBackoffMaxMs'>;
  instanceId: string;
  /** A signed logs URL of the app, narrowed to one container (crash events' `logs_url`). */
  logsUrl?: (app: AppRow, container: string) => string;
  sizeOf: (name: string) => ContainerSize;
  release: (app: AppRow) => Release | null;
  startOne: (app: AppRow, rel: Release, type: string, index: number, size: string) => Promise<ContainerRow>;
  /** True while the app is being deleted, and once its row is gone. */
  gone: (appId: string) => boolean;
  /** True while the app is being deleted (its containers' exits are no crashes). */
  removing: (appId: string) => boolean;
}

/**
 * Watches the engine's `die` events of this instance's containers: a running container that exits
 * is a crash (event, crash count), restarted with back-off until the app has crashed too often.
 */
export function watchCrashes(deps: CrashRestartsDeps) {
  const { runtime, store, clock, logger } = deps;
  const t = deps.intervals;
  let closed = false;
  const timers = new Set<ClockTimer>();
  const oomKilled = new Set<string>(); // engine ids the control plane killed as out-of-memory
  // Exits seen while the starter still waits on the container (booting), with their codes. Under load the engine's
  // answer that it runs can reach the starter after the `die` event: the starter then says it started (a crash after
  // all) or failed (its own failure, reported by it).
  const diedBooting = new Map<string, number | null>();
  const backoff = (n: number) => Math.min(t.crashBackoffMaxMs, t.crashBackoffMs * 2 ** Math.max(0, n - 1));

  /** A container exited while it should have been running: count it, restart it with back-off, or give up. */
  async function onCrash(row: ContainerRow, exitCode: number | null): Promise<void> {
    const app = deps.apps.find(row.app_id);
    if (!app) return;
    store.markDeleted(row.id, clock.now(), 'crashed');
    if (deps.removing(app.id)) return; // not a crash: the app is being deleted (the sweep removes it)
    let crashLogs = ''; // oom: killed so by the control plane, or by the kernel (Docker's OOMKilled flag)
    const oom =
      !!row.engine_id &&
      (oomKilled.delete(row.engine_id) || !!(await runtime.inspect(row.engine_id).catch(() => null))?.oomKilled);
    if (row.engine_id) {
      crashLogs = (await lastOutputLines(runtime, row.engine_id)).join('\n');
      await runtime.remove(row.engine_id).catch(() => undefined);
    }
    if (closed || !deps.apps.find(app.id)) return; // the emulator stopped (database closed) or the app went meanwhile
    if (oom)
      crashLogs += `${crashLogs ? '\n' : ''}Out of memory: the container was killed (memory limit ${Math.round(deps.sizeOf(row.size).memory / 1048576)} MiB)`;
    const count = deps.apps.countCrash(app.id);
    // The CLI prints "(logs on <logs_url>)" when crash_logs is set: a real, signed URL of the container's logs.
    const label = `${row.type}-${row.type_index}`;
    const logsUrl = deps.logsUrl?.(app, label) ?? '';
    deps.events.record({
      type: 'crash',
      app,
      typeData: {
        container_type: row.type,
        container: label,
        exit_code: exitCode,
        crash_logs: crashLogs,
        logs_url: logsUrl,
        ...(oom ? { oom_killed: true } : {}),
      },
    });
    if (count > MAX_CRASHES_IN_A_ROW) {
      deps.apps.setStatus(app.id, 'crashed');
      deps.events.record({
        type: 'repeated_crash',
        app,
        typeData: { container_type: row.type, crash_logs: crashLogs, logs_url: deps.logsUrl?.(app, row.type) ?? '' },
      });
      logger.warn({ app: app.name, crashes: count }, 'app crashed repeatedly: not restarting');
      return;
    }
    const rel = deps.release(app);
    if (!rel || closed) return;
    const timer = clock.setTimeout(() => {
      // platform time: a manual clock holds the restart until advanced
      timers.delete(timer);
      if (closed || deps.gone(app.id)) return;
      const fresh = deps.apps.find(app.id);
      const f = store.formation(app.id).find((x) => x.type === row.type);
      if (!fresh || fresh.status === 'crashed' || !f || row.type_index > f.amount) return;
      if (store.liveContainers(app.id).some((c) => c.type === row.type && c.type_index === row.type_index)) return;
      deps.startOne(fresh, rel, row.type, row.type_index, f.size).catch((err: Error) => {
        logger.info(
          { app: app.name, container: `${row.type}-${row.type_index}`, err: err.message },
          'restart after crash failed',
        );
        if (!closed && !deps.gone(app.id)) void onCrash({ ...row, engine_id: null }, null);
      });
    }, backoff(count));
    timer.unref();
    timers.add(timer);
  }

  const offEvents = runtime.onEvent((e) => {
    if (closed) return;
    if (e.labels[LABELS.instance] !== deps.instanceId || e.action !== 'die') return;
    const row = store.byEngineId(e.engineId);
    if (!row || row.deleted_at !== null) return;
    if (row.type === 'one-off') {
      if (row.state !== 'stopping') store.markDeleted(row.id, clock.now());
      return;
    }
    // booting: the starter's to judge (started() or startFailed()); stopping/stopped: an intended stop.
    if (row.state === 'booting') diedBooting.set(e.engineId, e.exitCode);
    if (row.state !== 'running') return;
    void onCrash(row, e.exitCode);
  });

  return {
    /** The starter marked the container running: an exit seen while it booted is a crash after all. */
    started(row: ContainerRow): void {
      if (!row.engine_id || !diedBooting.has(row.engine_id)) return;
      const exitCode = diedBooting.get(row.engine_id) ?? null;
      diedBooting.delete(row.engine_id);
      void onCrash(row, exitCode);
    },
    /** The start failed: an exit seen while it booted is part of that failure, which the starter reports. */
    startFailed: (engineId: string) => void diedBooting.delete(engineId),
    /** Its next exit is an OOM kill (the control plane killed it so). */
    markOom: (engineId: string) => void oomKilled.add(engineId),
    /** No more reactions to the engine: pending crash restarts are cancelled. */
    close(): void {
      closed = true;
      offEvents();
      for (const timer of timers) clock.clearTimeout(timer);
      timers.clear();
    },
  };
}
