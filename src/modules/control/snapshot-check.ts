// What the snapshot check's child process does with a file (snapshot-check.child.ts runs it, snapshot-check-process.ts
// starts and bounds that process). A snapshot file is untrusted input (issue 37): SQLite runs what a schema holds
// (a view is a query, a trigger runs on writes), so nothing of the file is executed before its schema is known to be
// the emulator's own. Order: the schema's text is read (sqlite_schema, which SQLite only parses); its migrations
// table must be the emulator's, then its versions known ones; every table, index, trigger and view must then be
// exactly what the emulator's migrations up to that version make; a page-level check; only then the migrations
// up to this version run on the file.
import { Database, type Db, migrate, migrationFiles } from '../../db/database.ts';

/** SQLite's own heap in the child (the page cache and sorting of a migration): a file cannot make it grow past it. */
const SQLITE_HEAP_BYTES = 256 * 1024 * 1024;
// More rows than migrations ever made: a file claiming them is not an emulator's.
const MAX_MIGRATION_ROWS = 10_000;

export type SnapshotCheck = { ok: true; version: number } | { ok: false; problem: string };

interface SchemaObject {
  type: string;
  name: string;
  sql: string | null;
}

const schemaOf = (db: Db): SchemaObject[] =>
  db.prepare<[], SchemaObject>('SELECT type, name, sql FROM sqlite_schema ORDER BY type, name').all();

/** The schema the emulator's migrations up to `version` make (an empty database migrated in memory). */
function referenceSchema(version: number): SchemaObject[] {
  const db = new Database(':memory:');
  try {
    migrate(db, undefined, version);
    return schemaOf(db);
  } finally {
    db.close();
  }
}

/** Up to three differences between a file's schema and the emulator's, as a user can act on them. */
function schemaDifferences(theirs: SchemaObject[], ours: SchemaObject[]): string[] {
  const key = (o: SchemaObject) => `${o.type} ${o.name}`;
  const expected = new Map(ours.map((o) => [key(o), o]));
  const found = new Map(theirs.map((o) => [key(o), o]));
  const problems: string[] = [];
  for (const [k, o] of found) {
    const mine = expected.get(k);
    if (!mine) problems.push(`it has a ${k} the emulator does not make`);
    else if (mine.sql !== o.sql) problems.push(`its ${k} is not the emulator's`);
  }
  for (const k of expected.keys()) if (!found.has(k)) problems.push(`its ${k} is missing`);
  return problems.slice(0, 3);
}

/** Checks the database file at `file` and brings it to this version's schema in place. */
export function checkAndMigrate(file: string): SnapshotCheck {
  let db: Db;
  try {
    db = new Database(file, { fileMustExist: true });
  } catch (err) {
    return { ok: false, problem: `cannot be opened: ${(err as Error).message}` };
  }
  try {
    // Nothing the schema names runs unless the schema is the emulator's; no function of a view or a trigger is
    // trusted meanwhile; SQLite's memory is bounded; links between rows are not checked by the migrations.
    db.pragma('trusted_schema = OFF');
    db.pragma(`hard_heap_limit = ${SQLITE_HEAP_BYTES}`);
    db.pragma('cell_size_check = ON');
    db.pragma('foreign_keys = OFF');
    let schema: SchemaObject[];
    try {
      schema = schemaOf(db);
    } catch (err) {
      return { ok: false, problem: `is not a readable database: ${(err as Error).message}` };
    }
    const table = schema.find((o) => o.name === 'schema_migrations');
    if (!table) return { ok: false, problem: 'is not a database of the emulator' };
    if (table.type !== 'table' || table.sql !== referenceSchema(0).find((o) => o.name === table.name)?.sql)
      return {
        ok: false,
        problem: 'is not a database of the emulator: its schema_migrations table is not the emulator’s',
      };
    const versions = db
      .prepare(`SELECT version FROM schema_migrations ORDER BY version LIMIT ${MAX_MIGRATION_ROWS + 1}`)
      .pluck()
      .all();
    const known = migrationFiles().map((f) => Number.parseInt(f, 10));
    const latest = Math.max(0, ...known);
    const version = Math.max(0, ...versions.map(Number).filter(Number.isFinite));
    if (version > latest)
      return { ok: false, problem: `comes from a newer emulator (schema ${version}, this one knows up to ${latest})` };
    const expected = known.filter((v) => v <= version);
    if (versions.length !== expected.length || versions.some((v, i) => v !== expected[i]))
      return { ok: false, problem: `lists migrations the emulator did not make (schema ${version})` };
    const differences = schemaDifferences(schema, referenceSchema(version));
    if (differences.length)
      return { ok: false, problem: `does not have the emulator's schema ${version}: ${differences.join('; ')}` };
    const damage = db.pragma('quick_check(3)', { simple: false }) as { quick_check: string }[];
    if (damage[0]?.quick_check !== 'ok')
      return { ok: false, problem: `is damaged: ${damage.map((d) => d.quick_check).join('; ')}` };
    migrate(db);
    return { ok: true, version };
  } catch (err) {
    return { ok: false, problem: `cannot be read: ${(err as Error).message}` };
  } finally {
    db.close();
  }
}
