// Backups of real addon servers (issue #15) as the database API gives them (go-scalingo backups.go):
// a manual backup runs the server's own dump tool in its container (pg_dump, mariadb-dump, a Redis
// RDB snapshot), the tar.gz archive goes to <state dir>/addon-backups/<id>.tar.gz, its status, size
// and times to SQLite; the download is a signed, expiring URL streaming the file.
import { createWriteStream, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '../../http/errors.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { defined } from '../../shared/defined.ts';
import { objectId } from '../../shared/ids.ts';
import { type Logger } from '../../shared/logger.ts';
import { type UrlSigner } from '../logs/logs-url.ts';
import { type AddonBackupRow, type AddonBackupsStore } from './addon-backups.store.ts';
import { type AddonServers } from './addon-servers.ts';
import { type AddonRow } from './addons.store.ts';

/** Backups kept per addon: the oldest go (row and file) beyond this. */
const KEEP = 20;
const ARCHIVE = 'addon-backup';
const URL_TTL_MS = 10 * 60_000;
/** An archive larger than this is cut and the backup fails (a runaway dump must not fill the disk). */
const MAX_BYTES = 4 * 1024 ** 3;

export interface AddonBackupsDeps {
  store: AddonBackupsStore;
  servers: AddonServers;
  signer: UrlSigner;
  clock: Clock;
  logger: Logger;
  dir: string;
  apiUrl: () => string;
}

export function createAddonBackups(deps: AddonBackupsDeps) {
  const { store, clock } = deps;
  const running = new Map<string, Promise<void>>(); // addon id → backup under way
  const fileOf = (id: string) => join(deps.dir, `${id}.tar.gz`);
  deps.store.markInterrupted();

  /** Archives whose row is gone (the addon was deleted: its rows went by ON DELETE CASCADE). */
  function sweep(): void {
    if (!existsSync(deps.dir)) return;
    for (const f of readdirSync(deps.dir)) {
      const id = f.replace(/\.tar\.gz$/, '');
      if (!store.byId(id) && !running.size) rmSync(join(deps.dir, f), { force: true });
    }
  }
  sweep();

  async function run(row: AddonBackupRow): Promise<void> {
    store.start(row.id, clock.now());
    const file = fileOf(row.id);
    try {
      const made = await deps.servers.archive(row.addon_id);
      if (!made) throw new Error('the database server is not running');
      mkdirSync(deps.dir, { recursive: true, mode: 0o700 });
      let bytes = 0;
      const limit = async function* (src: AsyncIterable<Buffer>) {
        for await (const chunk of src) {
          bytes += chunk.length;
          if (bytes > MAX_BYTES) throw new Error(`the archive is larger than ${MAX_BYTES} bytes`);
          yield chunk;
        }
      };
      await pipeline(made.stdout as Readable, limit, createWriteStream(file, { mode: 0o600 }));
      const code = await made.exitCode;
      if (code !== 0) throw new Error(`the dump exited with code ${code}`);
      store.finish(row.id, 'done', statSync(file).size, null, clock.now());
    } catch (err) {
      deps.logger.warn({ addon: row.addon_id, backup: row.id, err: (err as Error).message }, 'addon backup failed');
      rmSync(file, { force: true });
      store.finish(row.id, 'error', 0, (err as Error).message, clock.now());
    }
  }

  function prune(addonId: string): void {
    for (const old of store.forAddon(addonId).slice(KEEP)) {
      if (old.status !== 'done' && old.status !== 'error') continue;
      rmSync(fileOf(old.id), { force: true });
      store.delete(old.id);
    }
  }

  const json = (b: AddonBackupRow) => ({
    id: b.id,
    created_at: isoDate(b.created_at),
    started_at: isoDate(b.started_at ?? b.created_at),
    name: b.name,
    size: b.size,
    status: b.status,
    database_id: b.addon_id,
    method: b.method,
  });

  return {
    json,
    list: (addon: AddonRow) => store.forAddon(addon.id).map(json),

    /** A manual backup: recorded `scheduled`, run in the background (the CLI polls GET /backups/:id). */
    create(addon: AddonRow): AddonBackupRow {
      if (running.has(addon.id))
        throw ApiError.unprocessable({
          database_backup: ['a backup of this database is already running: wait for it to end'],
        });
      const server = defined(deps.servers.server(addon.id), `the server of addon ${addon.id}`);
      const now = clock.now();
      const stamp = (isoDate(now) ?? '').replace(/[-:]/g, '').replace(/\..*$/, '');
      const row: AddonBackupRow = {
        id: objectId(now),
        addon_id: addon.id,
        name: `${stamp}_${server.database}`,
        status: 'scheduled',
        method: 'manual',
        size: 0,
        error: null,
        created_at: now,
        started_at: null,
        finished_at: null,
      };
      sweep();
      store.insert(row);
      const p = run(row).finally(() => {
        running.delete(addon.id);
        prune(addon.id);
      });
      running.set(addon.id, p);
      return row;
    },

    show(addon: AddonRow, id: string): AddonBackupRow {
      const b = store.byId(id);
      if (!b || b.addon_id !== addon.id) throw ApiError.notFound('backup');
      return b;
    },

    /** The signed, expiring URL the CLI downloads the archive from (GET, no other credential). */
    downloadUrl(addon: AddonRow, id: string): string {
      const b = this.show(addon, id);
      if (b.status !== 'done')
        throw ApiError.badRequest(`backup ${id} is ${b.status}: only a finished backup can be downloaded`);
      return `${deps.apiUrl()}/_emulator/addon-backups/${b.id}/archive?${deps.signer.query(ARCHIVE, b.id)}`;
    },

    /** The archive a signed URL opens (401 invalid/expired, 404 gone). */
    archiveFile(id: string, q: { token?: string; timestamp?: string }): { path: string; size: number; name: string } {
      const check = deps.signer.check(ARCHIVE, q.token, q.timestamp, URL_TTL_MS);
      if (!check.ok)
        throw ApiError.unauthorized(
          check.reason === 'expired'
            ? 'this download URL has expired: ask the database API for a new one'
            : 'invalid download token',
        );
      if (check.subject !== id) throw ApiError.unauthorized('invalid download token');
      const b = store.byId(id);
      const path = fileOf(id);
      if (b?.status !== 'done' || !existsSync(path)) throw ApiError.notFound('backup');
      return { path, size: statSync(path).size, name: `${b.name}.tar.gz` };
    },

    /** The archive file of a finished backup of this addon (restore); 404 unknown, 400 not finished. */
    finishedArchive(addon: AddonRow, id: string): string {
      const b = this.show(addon, id);
      if (b.status !== 'done' || !existsSync(fileOf(b.id)))
        throw ApiError.badRequest(`backup ${id} is ${b.status}: only a finished backup can be restored`);
      return fileOf(b.id);
    },

    sweep,
    async idle(): Promise<void> {
      await Promise.allSettled([...running.values()]);
    },
  };
}

export type AddonBackups = ReturnType<typeof createAddonBackups>;
