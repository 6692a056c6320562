import { type Db } from '../../db/database.ts';
import { STARTUP_TOKEN_NAME } from '../auth/auth.service.ts';

// Whole-database work of the control plane (reset, restore). Tables are discovered from the schema,
// so areas that add tables later are covered without a change here. Kept apart:
// - schema_migrations and meta: what this database is (its schema version, its instance id);
// - users and api_tokens: the configured users and their configured tokens survive a reset (so do rows of any
//   table whose `fixed` column says the config declared them, e.g. SSH keys).
const KEPT_BY_RESET = new Set(['schema_migrations', 'meta', 'users', 'api_tokens', 'sqlite_sequence']);
const KEPT_BY_RESTORE = new Set(['schema_migrations', 'meta', 'sqlite_sequence']);

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export function createControlStore(db: Db) {
  const tablesStmt = db
    .prepare<[], string>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .pluck();
  const columnsOf = (schema: string, table: string) =>
    (db.prepare(`PRAGMA ${schema}.table_info(${quote(table)})`).all() as { name: string }[]).map((c) => c.name);
  const allApps = db.prepare<[], string>('SELECT id FROM apps').pluck();
  const appsOf = db.prepare<[string], string>('SELECT id FROM apps WHERE owner_id = ?').pluck();
  const liveCount = db.prepare<[], number>('SELECT COUNT(*) FROM containers WHERE deleted_at IS NULL').pluck();
  let tables: string[] | null = null;
  let appTables: string[] | null = null;
  let wipe: { run(): unknown }[] | null = null;

  // The schema only changes through migrations at open: read once.
  const userTables = () => (tables ??= tablesStmt.all());

  return {
    tables: userTables,
    appIds: () => allApps.all(),
    appIdsOf: (userId: string) => appsOf.all(userId),
    liveContainers: () => liveCount.get() ?? 0,

    /** Images the deployments built (the engine keeps them while a deployment row names them). */
    images: () =>
      new Set(db.prepare<[], string>('SELECT DISTINCT image FROM deployments WHERE image IS NOT NULL').pluck().all()),

    /** Logs archive rows (files live outside the database: a restored row may have lost its file). */
    archives: () =>
      userTables().includes('log_archives')
        ? (db.prepare('SELECT id, file FROM log_archives').all() as { id: string; file: string }[])
        : [],
    dropArchive: (id: string) => void db.prepare('DELETE FROM log_archives WHERE id = ?').run(id),

    /** Every row of every table but the kept ones; tokens made through the API go, configured and start-up ones stay. */
    wipeAll(): void {
      // Rows a `fixed` column marks as declared in the config (SSH keys…) stay, like the configured tokens.
      const statements = (wipe ??= [
        ...userTables()
          .filter((t) => !KEPT_BY_RESET.has(t))
          .map((t) =>
            db.prepare(`DELETE FROM ${quote(t)}${columnsOf('main', t).includes('fixed') ? ' WHERE fixed = 0' : ''}`),
          ),
        db.prepare(`DELETE FROM api_tokens WHERE fixed = 0 AND name <> '${STARTUP_TOKEN_NAME}'`),
        db.prepare("DELETE FROM sqlite_sequence WHERE name NOT IN ('schema_migrations')"),
      ]);
      // Children and parents all go: foreign keys are not checked row by row (faster, and no order to keep).
      db.pragma('foreign_keys = OFF');
      try {
        db.transaction(() => {
          for (const s of statements) s.run();
        })();
      } finally {
        db.pragma('foreign_keys = ON');
      }
    },

    /** Rows of these apps in every table with an app_id column (events, logs, stats… have no foreign key), then the apps. */
    deleteApps(ids: string[]): void {
      if (!ids.length) return;
      const tables = (appTables ??= userTables().filter(
        (t) => t !== 'apps' && columnsOf('main', t).includes('app_id'),
      ));
      const list = JSON.stringify(ids);
      db.transaction(() => {
        for (const t of tables)
          db.prepare(`DELETE FROM ${quote(t)} WHERE app_id IN (SELECT value FROM json_each(?))`).run(list);
        db.prepare('DELETE FROM apps WHERE id IN (SELECT value FROM json_each(?))').run(list);
      })();
    },

    /**
     * Replaces every table's rows by the attached database's (a snapshot brought to this schema
     * version). Columns are copied by name; a table the snapshot lacks ends up empty.
     */
    copyFrom(schema: string): void {
      const theirs = new Set(
        db.prepare<[], string>(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table'`).pluck().all(),
      );
      db.pragma('foreign_keys = OFF');
      try {
        db.transaction(() => {
          for (const t of userTables()) {
            if (KEPT_BY_RESTORE.has(t)) continue;
            db.prepare(`DELETE FROM main.${quote(t)}`).run();
            if (!theirs.has(t)) continue;
            const mine = columnsOf('main', t);
            const cols = columnsOf(schema, t)
              .filter((c) => mine.includes(c))
              .map(quote)
              .join(', ');
            if (cols)
              db.prepare(`INSERT INTO main.${quote(t)} (${cols}) SELECT ${cols} FROM ${schema}.${quote(t)}`).run();
          }
          db.prepare('DELETE FROM main.sqlite_sequence').run();
          if (theirs.has('sqlite_sequence'))
            db.prepare(
              `INSERT INTO main.sqlite_sequence (name, seq) SELECT name, seq FROM ${schema}.sqlite_sequence`,
            ).run();
        })();
      } finally {
        db.pragma('foreign_keys = ON');
      }
    },
  };
}

export type ControlStore = ReturnType<typeof createControlStore>;
