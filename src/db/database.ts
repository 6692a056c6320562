import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type BetterSqlite3 from 'better-sqlite3';
import { countWrites } from './write-count.ts';

/**
 * better-sqlite3 is a CommonJS package: required as one, because node's ESM loader would first load its lexer and
 * parse the package for named exports (~3 ms of a start, BENCHMARKS.md, issue 25).
 */
export const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
export type Db = BetterSqlite3.Database;

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Opens the emulator's database: a file in the data directory, or memory (`--in-memory`).
 * WAL lets readers (API requests) go on while a writer commits; foreign keys keep
 * children (tokens, events, collaborators) tied to their owner rows.
 */
export function openDatabase(opts: { file?: string; inMemory?: boolean }): Db {
  let db: Db;
  if (opts.inMemory || !opts.file) {
    db = countWrites(new Database(':memory:'));
  } else {
    mkdirSync(dirname(opts.file), { recursive: true, mode: 0o700 });
    // The file holds variables and tokens: created owner-only whatever the umask. SQLite gives the
    // -wal and -shm files the database file's mode; files from an older start are fixed too.
    if (!existsSync(opts.file)) closeSync(openSync(opts.file, 'a', 0o600));
    chmodSync(opts.file, 0o600);
    db = countWrites(new Database(opts.file));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    for (const f of [`${opts.file}-wal`, `${opts.file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
  }
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}

/** The numbered migrations (NNN_name.sql) of a directory, in order. */
export const migrationFiles = (dir = MIGRATIONS_DIR): string[] =>
  readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort();

/**
 * Applies every numbered migration (NNN_name.sql) not yet recorded, each in its own transaction; those up to `upTo`
 * only when given (the schema a snapshot of that version must have).
 */
export function migrate(db: Db, dir = MIGRATIONS_DIR, upTo = Number.POSITIVE_INFINITY): string[] {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  const done = new Set(db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]);
  const applied: string[] = [];
  for (const file of migrationFiles(dir)) {
    const version = Number.parseInt(file, 10);
    if (done.has(version) || version > upTo) continue;
    const sql = readFileSync(join(dir, file), 'utf8');
    db.transaction(() => {
      db.exec(sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        version,
        file,
        new Date().toISOString(),
      );
    })();
    applied.push(file);
  }
  return applied;
}

// One transaction function per connection, made once: better-sqlite3's `db.transaction()` builds a wrapper and its
// BEGIN/COMMIT/ROLLBACK bindings at each call (about 6 µs), which the hot writes (an app created, deleted) paid every time.
const transactionRunners = new WeakMap<Db, <T>(fn: () => T) => T>();

/** Runs fn in one transaction (a savepoint when nested): every multi-row change goes through here. */
export function tx<T>(db: Db, fn: () => T): T {
  let run = transactionRunners.get(db);
  if (!run) {
    run = db.transaction(<R>(f: () => R): R => f()) as <R>(f: () => R) => R;
    transactionRunners.set(db, run);
  }
  return run(fn);
}

/** Answers whether the database serves queries (health probe). */
export function pingDatabase(db: Db): void {
  db.prepare('SELECT 1').get();
}

/** Emulator-wide values (table meta): the value of `key`, created with `init()` the first time. */
export function metaValue(db: Db, key: string, init: () => string): string {
  const row = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key);
  if (row) return row.value;
  const value = init();
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run(key, value);
  return value;
}
