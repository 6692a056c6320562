// Snapshots of the emulator's state: the whole SQLite database (apps, formation, containers,
// deployments, events, logs history…) serialised in one consistent read. Kept as files under
// <data dir>/snapshots/, or in memory with --in-memory. Restoring copies a snapshot's rows into the
// live database (same connection: every prepared statement of the areas stays valid); the control
// service then brings Docker in line with the restored formation.
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { type Db } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { defined } from '../../shared/defined.ts';
import { objectId, secret } from '../../shared/ids.ts';
import { type ControlStore } from './control.store.ts';
import { checkSnapshotFile } from './snapshot-check-process.ts';

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

    /**
     * Checks a snapshot file and brings it to this schema version, away from the live database (422 when it is not
     * one); `replaceRows()` then replaces the live rows by its rows, synchronously: the caller reads what it needs of
     * the state before right before it.
     */
    async check(data: Buffer): Promise<{ replaceRows(): void }> {
      const file = await prepare(data, deps.stateDir);
      return {
        replaceRows() {
          try {
            db.prepare('ATTACH DATABASE ? AS snapshot').run(file);
            try {
              deps.store.copyFrom('snapshot');
            } finally {
              db.prepare('DETACH DATABASE snapshot').run();
            }
          } finally {
            removeDatabaseFile(file);
          }
        },
      };
    },
  };
}

/**
 * Writes the bytes where the check can read them (the state directory, owner-only), has the child process check and
 * migrate them (snapshot-check-process.ts), and answers the file to attach. 422 with what is wrong otherwise.
 */
async function prepare(data: Buffer, workDir: string): Promise<string> {
  if (data.length < 100 || !data.subarray(0, 16).equals(SQLITE_HEADER))
    throw ApiError.invalid('snapshot', 'is not an SQLite database file');
  mkdirSync(workDir, { recursive: true });
  const file = join(workDir, `restore-${secret(6).replace(/[^A-Za-z0-9]/g, 'x')}.sqlite`);
  // A file in WAL mode comes without its log: marked as a rollback-journal file (bytes 18-19), as it was serialised.
  writeFileSync(file, data, { flag: 'wx', mode: 0o600 });
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, Buffer.from([1, 1]), 0, 2, 18);
  } finally {
    closeSync(fd);
  }
  const checked = await checkSnapshotFile(file, data.length).catch((err: Error) => {
    removeDatabaseFile(file);
    throw err;
  });
  if (checked.ok) return file;
  removeDatabaseFile(file);
  throw ApiError.invalid('snapshot', checked.problem);
}

function removeDatabaseFile(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
}

export type Snapshots = ReturnType<typeof createSnapshots>;
