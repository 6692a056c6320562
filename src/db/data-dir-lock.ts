// One emulator process per data dir. The lock is the kernel's: an exclusive SQLite lock (POSIX
// advisory, held by locking_mode EXCLUSIVE) on <data dir>/emulator.lock, which the kernel releases
// when its process ends however it ends (kill -9, a reboot), so a lock left by a dead process is
// simply taken over; SQLite also refuses a second connection of the same process. Who holds it (pid,
// API URL once the ports are bound) is written beside it for the others to read, since a locked
// database cannot be read.
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database, type Db } from './database.ts';

const LOCK_FILE = 'emulator.lock';
export const HOLDER_FILE = 'emulator-process.json';

export interface DataDirHolder {
  pid: number;
  /** The API's URL, once the ports are bound (null while the process starts). */
  api: string | null;
  routerPort: number | null;
  startedAt: string;
}

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: DataDirHolder | null,
  ) {
    super(
      `the data dir ${dataDir} is in use by another emulator` +
        (holder ? ` (pid ${holder.pid}${holder.api ? `, API ${holder.api}` : ', starting'})` : '') +
        ': stop it first, or choose another --data-dir',
    );
  }
}

export interface DataDirLock {
  /** Tells the others where this process answers. */
  describe(update: Partial<Pick<DataDirHolder, 'api' | 'routerPort'>>): void;
  release(): void;
}

/** Takes the data dir's lock, or throws DataDirInUseError naming the process holding it. */
export function lockDataDir(dataDir: string): DataDirLock {
  const db = tryLock(dataDir);
  if (!db) throw new DataDirInUseError(dataDir, readHolder(dataDir));
  let holder: DataDirHolder = { pid: process.pid, api: null, routerPort: null, startedAt: new Date().toISOString() };
  writeHolder(dataDir, holder);
  let released = false;
  return {
    describe(update) {
      holder = { ...holder, ...update };
      if (!released) writeHolder(dataDir, holder);
    },
    release() {
      if (released) return;
      released = true;
      // The file first: a process that takes the lock right after writes its own.
      if (readHolder(dataDir)?.pid === process.pid) rmSync(join(dataDir, HOLDER_FILE), { force: true });
      db.close();
    },
  };
}

/**
 * The process holding the data dir's lock, or null when none does (no emulator runs on it). The lock
 * is taken and given back at once to know: a process starting on the dir in that instant waits for it.
 */
export function dataDirHolder(dataDir: string): DataDirHolder | null {
  if (!existsSync(join(dataDir, LOCK_FILE))) return null;
  const probe = tryLock(dataDir);
  if (probe) {
    probe.close();
    return null;
  }
  return readHolder(dataDir) ?? { pid: 0, api: null, routerPort: null, startedAt: '' };
}

function tryLock(dataDir: string): Db | null {
  const file = join(dataDir, LOCK_FILE);
  // A process starting on the dir while another only probes it waits that long (a probe holds it for microseconds).
  const db = new Database(file, { timeout: 1000 });
  try {
    chmodSync(file, 0o600);
    db.pragma('locking_mode = EXCLUSIVE');
    // Nothing worth a journal on disk: the table is only there so that the transaction writes.
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS held (pid INTEGER); DELETE FROM held; COMMIT');
    return db;
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') return null;
    throw err;
  }
}

function readHolder(dataDir: string): DataDirHolder | null {
  try {
    const value = JSON.parse(readFileSync(join(dataDir, HOLDER_FILE), 'utf8')) as Partial<DataDirHolder>;
    if (typeof value.pid !== 'number') return null;
    return {
      pid: value.pid,
      api: typeof value.api === 'string' ? value.api : null,
      routerPort: typeof value.routerPort === 'number' ? value.routerPort : null,
      startedAt: typeof value.startedAt === 'string' ? value.startedAt : '',
    };
  } catch {
    return null;
  }
}

function writeHolder(dataDir: string, holder: DataDirHolder): void {
  const file = join(dataDir, HOLDER_FILE);
  // Written whole then renamed: a reader never sees half of it.
  writeFileSync(`${file}.${process.pid}`, JSON.stringify(holder), { mode: 0o600 });
  renameSync(`${file}.${process.pid}`, file);
}
