import type Database from 'better-sqlite3';

type Db = Database.Database;

/** How many writing calls a connection has made: a number that only grows, read by caches of what the rows show. */
export interface WriteCount {
  readonly value: number;
}

const counts = new WeakMap<Db, { value: number }>();

type Run = (...args: unknown[]) => unknown;
const WRITING_METHODS = ['run', 'get', 'all', 'iterate'] as const;

/**
 * Counts, from now on, every call on the connection that may write: each run/get/all/iterate of a statement that
 * is not read-only (SQLite's own `sqlite3_stmt_readonly`: INSERT, UPDATE, DELETE, DDL, ATTACH…, with their
 * triggers and whatever transaction they are in), every `exec` (scripts), every `pragma`. A superset of SQLite's
 * `total_changes()`, which a cache used to read with a statement on each request: this is a property read.
 * Counted after the call, a failed call too. Must be installed before the connection's first statement is
 * prepared (openDatabase does it first): statements prepared before are not seen.
 */
export function countWrites(db: Db): Db {
  if (counts.has(db)) return db;
  const count = { value: 0 };
  counts.set(db, count);
  const prepare = db.prepare;
  const exec = db.exec;
  const pragma = db.pragma;
  // Own properties of this connection only: statements of other connections (a snapshot being checked) are not counted.
  db.prepare = function countedPrepare(this: Db, ...args: Parameters<Db['prepare']>) {
    const statement = prepare.apply(this, args);
    if (statement.readonly) return statement;
    const target = statement as unknown as Record<(typeof WRITING_METHODS)[number], Run>;
    for (const name of WRITING_METHODS) {
      const original = target[name];
      target[name] = function countedCall(this: unknown, ...params: unknown[]) {
        try {
          return original.apply(this, params);
        } finally {
          count.value++;
        }
      };
    }
    return statement;
  } as Db['prepare'];
  db.exec = function countedExec(this: Db, source: string) {
    try {
      return exec.call(this, source);
    } finally {
      count.value++;
    }
  };
  db.pragma = function countedPragma(this: Db, ...args: Parameters<Db['pragma']>) {
    try {
      return pragma.apply(this, args);
    } finally {
      count.value++;
    }
  } as Db['pragma'];
  return db;
}

/** The write count of a connection set up by `countWrites`; fails loudly for one that is not (its writes would go unseen). */
export function writeCount(db: Db): WriteCount {
  const count = counts.get(db);
  if (!count) throw new Error('this database connection does not count its writes: open it with countWrites()');
  return count;
}
