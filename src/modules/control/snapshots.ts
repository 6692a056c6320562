// Snapshots of the emulator's state: the whole SQLite database (apps, formation, containers,
// deployments, events, logs history…) serialised in one consistent read. Kept as files under
// <data dir>/snapshots/, or in memory with --in-memory. Restoring copies a snapshot's rows into the
// live database (same connection: every prepared statement of the areas stays valid); the control
// service then brings Docker in line with the restored formation.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database, migrate, MIGRATIONS_DIR, type Db } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../shared/clock.ts';
import { isoDate } from '../../shared/clock.ts';
import { objectId, secret } from '../../shared/ids.ts';
import type { ControlStore } from './control.store.ts';
import { defined } from '../../shared/defined.ts';

/** Largest snapshot accepted for import (bytes). */
export const SNAPSHOT_MAX_BYTES = 512 * 1024 * 1024;
// Kept snapshots (the oldest goes past this): each one is a full copy of the database.
const MAX_SNAPSHOTS = 50;
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

export interface SnapshotMeta {
  id: string;
  createdAt: number;
  size: number;
}

export const snapshotJson = (s: SnapshotMeta) => ({ id: s.id, created_at: isoDate(s.createdAt), size: s.size });

const latestMigration = () =>
  Math.max(
    0,
    ...readdirSync(MIGRATIONS_DIR)
      .filter((f) => /^\d+_.+\.sql$/.test(f))
      .map((f) => Number.parseInt(f, 10)),
  );

export function createSnapshots(deps: {
  db: Db;
  store: ControlStore;
  clock: Clock;
  dataDir: string | null;
  stateDir: string;
}) {
  const { db, clock } = deps;
  const dir = deps.dataDir ? join(deps.dataDir, 'snapshots') : null;
  const memory = new Map<string, Buffer>();
  const metas = new Map<string, SnapshotMeta>();
  // Snapshots of earlier runs of this data dir stay available.
  if (dir) {
    mkdirSync(dir, { recursive: true });
    for (const f of readdirSync(dir)
      .filter((n) => /^sn-[0-9a-f]{24}\.sqlite$/.test(n))
      .sort()) {
      const st = statSync(join(dir, f));
      metas.set(f.slice(0, -7), { id: f.slice(0, -7), createdAt: st.mtimeMs, size: st.size });
    }
  }

  function find(id: string): SnapshotMeta {
    const m = metas.get(id);
    if (!m) throw ApiError.notFound('snapshot');
    return m;
  }

  function remove(id: string): void {
    find(id);
    metas.delete(id);
    memory.delete(id);
    if (dir) rmSync(join(dir, `${id}.sqlite`), { force: true });
  }

  return {
    /** The database now, as one SQLite file. */
    serialize: (): Buffer => db.serialize(),

    create(): SnapshotMeta {
      const data = db.serialize();
      const meta: SnapshotMeta = { id: `sn-${objectId(clock.now())}`, createdAt: clock.now(), size: data.length };
      if (dir) writeFileSync(join(dir, `${meta.id}.sqlite`), data);
      else memory.set(meta.id, data);
      metas.set(meta.id, meta);
      for (const oldest of metas.keys()) {
        if (metas.size <= MAX_SNAPSHOTS) break;
        remove(oldest);
      }
      return meta;
    },

    list: (): SnapshotMeta[] => [...metas.values()],
    find,
    data(id: string): Buffer {
      find(id);
      return memory.get(id) ?? readFileSync(join(defined(dir, 'the snapshots dir'), `${id}.sqlite`));
    },
    remove,
    clear(): void {
      for (const id of [...metas.keys()]) remove(id);
    },

    /** Replaces the live database's rows by the snapshot's (brought to this schema version first). */
    load(data: Buffer): void {
      const file = prepare(data, deps.stateDir);
      try {
        db.prepare('ATTACH DATABASE ? AS snapshot').run(file);
        try {
          deps.store.copyFrom('snapshot');
        } finally {
          db.prepare('DETACH DATABASE snapshot').run();
        }
      } finally {
        for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
      }
    },
  };
}

/**
 * Checks that the bytes are an emulator database this version can read, migrates a copy to the
 * current schema, and writes it where it can be attached. 422 when it is not one.
 */
function prepare(data: Buffer, workDir: string): string {
  if (data.length < 100 || !data.subarray(0, 16).equals(SQLITE_HEADER))
    throw ApiError.invalid('snapshot', 'is not an SQLite database file');
  const copy = Buffer.from(data);
  // A file in WAL mode cannot be opened from memory: mark it as a rollback-journal file (bytes 18-19).
  copy[18] = 1;
  copy[19] = 1;
  let src: Db;
  try {
    src = new Database(copy);
  } catch (err) {
    throw ApiError.invalid('snapshot', `cannot be opened: ${(err as Error).message}`);
  }
  try {
    let version: number;
    try {
      version = (src.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get() as number | null) ?? 0;
      src.prepare('SELECT id FROM apps LIMIT 1').get();
    } catch {
      throw ApiError.invalid('snapshot', 'is not a database of the emulator');
    }
    if (version > latestMigration())
      throw ApiError.invalid(
        'snapshot',
        `comes from a newer emulator (schema ${version}, this one knows up to ${latestMigration()})`,
      );
    src.pragma('foreign_keys = OFF');
    migrate(src);
    mkdirSync(workDir, { recursive: true });
    const file = join(workDir, `restore-${secret(6).replace(/[^A-Za-z0-9]/g, 'x')}.sqlite`);
    writeFileSync(file, src.serialize());
    return file;
  } finally {
    src.close();
  }
}

export type Snapshots = ReturnType<typeof createSnapshots>;
