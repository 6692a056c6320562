// Restoring a backup into the running server (issue 22). The database API has no public restore call
// (docs/fidelity.md): POST /databases/:id/backups/:backup/restore starts one, the database is
// `restoring` (its other calls answer 503) until the kind's restore script has replayed the dump, and
// GET /databases/:id/restores/:restore says how it ended. One restore or backup at a time per addon.
import { createReadStream } from 'node:fs';
import { ApiError } from '../../http/errors.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { objectId } from '../../shared/ids.ts';
import { type Logger } from '../../shared/logger.ts';
import { type AddonBackups } from './addon-backups.ts';
import { type AddonServers } from './addon-servers.ts';
import { type AddonRow } from './addons.store.ts';

/** Restores remembered (the newest), for GET …/restores/:id. */
const KEEP = 200;
/** The archive is read in chunks of 1 MiB (not 64 KiB): 16× fewer writes on the way to the server's stdin. */
const READ_CHUNK = 1024 * 1024;

export interface RestoreRecord {
  id: string;
  addon_id: string;
  backup_id: string;
  status: 'running' | 'done' | 'error';
  error: string | null;
  started_at: number;
  finished_at: number | null;
}

export interface AddonRestoresDeps {
  servers: AddonServers;
  backups: AddonBackups;
  clock: Clock;
  logger: Logger;
  /** The addon row's status (restoring while it runs, then running). */
  setStatus: (addonId: string, status: string) => void;
}

export function createAddonRestores(deps: AddonRestoresDeps) {
  const records = new Map<string, RestoreRecord>();
  const running = new Map<string, Promise<void>>();

  const json = (r: RestoreRecord) => ({
    id: r.id,
    database_id: r.addon_id,
    backup_id: r.backup_id,
    status: r.status,
    error: r.error ?? '',
    started_at: isoDate(r.started_at) ?? '',
    finished_at: r.finished_at === null ? null : (isoDate(r.finished_at) ?? null),
  });

  return {
    json,
    /** Starts the restore of a finished backup (the addon must be running: checked by the route). */
    start(addon: AddonRow, backupId: string): RestoreRecord {
      if (running.has(addon.id))
        throw ApiError.unprocessable({
          restore: ['a restore of this database is already running: wait for it to end'],
        });
      const file = deps.backups.finishedArchive(addon, backupId);
      const record: RestoreRecord = {
        id: objectId(deps.clock.now()),
        addon_id: addon.id,
        backup_id: backupId,
        status: 'running',
        error: null,
        started_at: deps.clock.now(),
        finished_at: null,
      };
      records.set(record.id, record);
      for (const old of [...records.keys()].slice(0, Math.max(0, records.size - KEEP))) records.delete(old);
      deps.setStatus(addon.id, 'restoring');
      const p = deps.servers
        .restoreArchive(addon.id, createReadStream(file, { highWaterMark: READ_CHUNK }))
        .then(() => void (record.status = 'done'))
        .catch((err: Error) => {
          deps.logger.warn({ addon: addon.id, backup: backupId, err: err.message }, 'addon restore failed');
          record.status = 'error';
          record.error = err.message;
        })
        .finally(() => {
          record.finished_at = deps.clock.now();
          running.delete(addon.id);
          if (deps.servers.server(addon.id)) deps.setStatus(addon.id, 'running');
        });
      running.set(addon.id, p);
      return record;
    },
    show(addon: AddonRow, id: string): RestoreRecord {
      const r = records.get(id);
      if (!r || r.addon_id !== addon.id) throw ApiError.notFound('restore');
      return r;
    },
    async idle(): Promise<void> {
      await Promise.allSettled([...running.values()]);
    },
  };
}

export type AddonRestores = ReturnType<typeof createAddonRestores>;
