// Keeping addon servers up: one start at a time per addon (bringUp), the addon's status following it,
// and a server that stops without the emulator asking started again on its volume.

import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { type Logger } from '../../shared/logger.ts';
import { type AddonProgress } from './addon-server-start.ts';
import { type AddonServerRow, type AddonServersStore } from './addon-servers.store.ts';

export function createAddonSupervisor(o: {
  store: AddonServersStore;
  runtime: ContainerRuntime;
  logger: Logger;
  instanceId: string;
  progress: AddonProgress;
  startServer: (row: AddonServerRow) => Promise<void>;
  setStatus: (addonId: string, status: string) => void;
  onRunning?: (row: AddonServerRow) => void;
}) {
  const { store, logger, progress } = o;
  const pending = new Map<string, Promise<void>>(); // addon id → provisioning under way
  const removing = new Set<string>(); // addon ids whose server the emulator itself is removing
  let stopped = false;

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
      .then(() => o.startServer(row))
      .then(async () => {
        if (!store.byAddon(row.addon_id)) return;
        o.setStatus(row.addon_id, 'running');
        o.onRunning?.(row);
        await steps.after?.();
      })
      .catch((err: Error) => {
        logger.warn({ addon: row.addon_id, err: err.message }, 'addon server could not start');
        if (!store.byAddon(row.addon_id)) return;
        progress.note(row, `! the ${row.kind} server could not start: ${err.message}`);
        o.setStatus(row.addon_id, 'error');
      })
      .finally(() => pending.delete(row.addon_id));
    pending.set(row.addon_id, p);
    return p;
  }

  // A server that stops without the emulator asking (docker kill, a crash, the OOM killer) is
  // started again on its volume, as the platform restarts a database: the addon shows
  // `provisioning` with the reason meanwhile, and its logs and events (addon_updated) say so.
  const offEvents = o.runtime.onEvent((e) => {
    const addonId = e.labels[LABELS.addonId];
    if (stopped || e.action !== 'die' || !addonId || e.labels[LABELS.owner] !== o.instanceId) return;
    if (pending.has(addonId) || removing.has(addonId)) return;
    const row = store.byAddon(addonId);
    if (!row) return;
    progress.note(
      row,
      `the ${row.kind} server stopped unexpectedly (exit code ${e.exitCode ?? '?'}): restarting it on its data`,
    );
    o.setStatus(addonId, 'provisioning');
    void bringUp(row);
  });

  return {
    bringUp,
    /** The start under way of an addon, if any. */
    pending: (addonId: string) => pending.get(addonId),
    /** While `work` runs, the server's `die` is the emulator's own doing, not an outage. */
    async removing<T>(addonId: string, work: () => Promise<T>): Promise<T> {
      removing.add(addonId);
      try {
        return await work();
      } finally {
        removing.delete(addonId);
      }
    },
    async idle(): Promise<void> {
      await Promise.allSettled([...pending.values()]);
    },
    /** The emulator is exiting: stops are its own doing from now on, not outages to restart. */
    stop(): void {
      stopped = true;
      offEvents();
    },
  };
}
