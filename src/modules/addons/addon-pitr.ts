// Point-in-time recovery of PostgreSQL addons (issue 22; go-scalingo DatabaseGetPITRRecoveryWindow and
// DatabaseRestorePITR). As on the platform (doc.scalingo.com/databases/postgresql/backing-up): Starter and
// Business plans only, one base backup and the write-ahead log since, a window of at most the last seven days.
// The server keeps them in its volume (addon-pitr-scripts.ts); a restore is an operation of the addon's app:
// the addon is `restoring` while the server restarts on the base backup and replays the log up to the time
// asked, then `running` (or `error`, with the server's reason).
import { ApiError } from '../../http/errors.ts';
import { isoDate } from '../../shared/clock.ts';
import { type Logger } from '../../shared/logger.ts';
import { type OperationRow } from '../operations/operations.store.ts';
import { PITR_BASE_TIME, PITR_ENABLE, PITR_PREPARE } from './addon-pitr-scripts.ts';
import { type AddonServers } from './addon-servers.ts';
import { findPlan, findProvider } from './addons.catalog.ts';
import { type AddonRow } from './addons.store.ts';

/** A time as recovery_target_time takes it: a numeric offset (PostgreSQL refuses zone abbreviations such as `Z`). */
export const pgTime = (at: Date) => at.toISOString().replace('T', ' ').replace('Z', '+00');

/** The platform's recovery window: "between now and now minus seven days". */
const WINDOW_MS = 7 * 24 * 3_600_000;

export interface AddonPitrDeps {
  servers: AddonServers;
  addonOf: (addonId: string) => AddonRow | undefined;
  operations: {
    start(appId: string, type: string, work: () => Promise<void>, data: Record<string, unknown>): OperationRow;
  };
  logger: Logger;
}

export function createAddonPitr(deps: AddonPitrDeps) {
  const { servers } = deps;
  const enabling = new Map<string, Promise<void>>();
  const restoring = new Set<string>();

  /** Why the addon has no point-in-time recovery, or undefined when it has. */
  function unavailable(addon: AddonRow): string | undefined {
    if (servers.server(addon.id)?.kind !== 'postgresql')
      return 'point-in-time recovery is available for PostgreSQL databases only (the platform has none for MySQL or Redis)';
    const provider = findProvider(addon.provider_id);
    const plan = (provider && findPlan(provider, addon.plan_id)?.name) ?? addon.plan_id;
    if (/sandbox/.test(plan))
      return `point-in-time recovery is not available on the plan ${plan}: upgrade to a Starter or Business plan`;
    return undefined;
  }

  /** Turns PITR on in the running server (one base backup, then the log kept), once per addon at a time. */
  function enable(addonId: string): Promise<void> {
    let p = enabling.get(addonId);
    if (!p) {
      p = servers
        .pitr(addonId, PITR_ENABLE)
        .then(() => undefined)
        .catch((err: Error) => deps.logger.warn({ addon: addonId, err: err.message }, 'PITR base backup failed'))
        .finally(() => enabling.delete(addonId));
      enabling.set(addonId, p);
    }
    return p;
  }

  /** The window as the database sees it, in real time (its log carries the machine's time, not the test clock). */
  async function window(addon: AddonRow): Promise<{ earliest: number; latest: number } | null> {
    const out = await servers.pitr(addon.id, PITR_BASE_TIME);
    if (!/^\d+$/.test(out)) return null;
    const latest = Date.now();
    return { earliest: Math.max(Number(out) * 1000, latest - WINDOW_MS), latest };
  }

  return {
    /** A server answers: PITR on when its plan has it (a Sandbox upgraded to Starter gets it at its restart). */
    onRunning(addonId: string): void {
      const addon = deps.addonOf(addonId);
      if (addon && !unavailable(addon) && !restoring.has(addonId)) void enable(addonId);
    },

    /** 400 when the addon has no point-in-time recovery. */
    check(addon: AddonRow): void {
      const why = unavailable(addon);
      if (why) throw ApiError.badRequest(why);
    },

    /** go-scalingo's DatabasePITRRecoveryWindow: empty until the base backup exists. */
    async recoveryWindow(
      addon: AddonRow,
    ): Promise<{ earliest_recoverable_at?: string; latest_recoverable_at?: string }> {
      await enabling.get(addon.id);
      const w = await window(addon);
      if (!w) {
        void enable(addon.id);
        return {};
      }
      return { earliest_recoverable_at: isoDate(w.earliest), latest_recoverable_at: isoDate(w.latest) };
    },

    /** Starts the restore to `at` as an operation of the addon's app; 422 outside the window or while one runs. */
    async restore(addon: AddonRow, at: Date): Promise<OperationRow> {
      if (restoring.has(addon.id))
        throw ApiError.unprocessable({ restore_time: ['a restore of this database is already running'] });
      await enabling.get(addon.id);
      const w = await window(addon);
      const t = at.getTime();
      if (!w || t < w.earliest || t > w.latest)
        throw ApiError.unprocessable({
          restore_time: [
            w
              ? `must be within the recovery window, from ${isoDate(w.earliest)} to ${isoDate(w.latest)}`
              : 'no recovery window yet: the base backup is being made, retry in a few seconds',
          ],
        });
      restoring.add(addon.id);
      const work = async () => {
        try {
          servers.setStatus(addon.id, 'restoring');
          await servers.pitr(addon.id, PITR_PREPARE, { TARGET: pgTime(at) }).catch((err: Error) => {
            servers.setStatus(addon.id, 'running');
            throw err;
          });
          await servers.restart(addon.id, { signal: 'SIGINT' });
          if (deps.addonOf(addon.id)?.status !== 'running')
            throw new Error(servers.statusMessage(addon.id) ?? 'the server did not come back after the recovery');
        } finally {
          restoring.delete(addon.id);
        }
      };
      return deps.operations.start(addon.app_id, 'database-pitr-restore', work, {
        addon_id: addon.id,
        restore_time: at.toISOString(),
      });
    },
  };
}

export type AddonPitr = ReturnType<typeof createAddonPitr>;
