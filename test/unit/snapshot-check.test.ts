import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Database, migrate, migrationFiles } from '../../src/db/database.ts';
import { checkAndMigrate } from '../../src/modules/control/snapshot-check.ts';
import { checkSnapshotFile } from '../../src/modules/control/snapshot-check-process.ts';

// The snapshot check itself (what the child process runs) and the child's deadline; the emulator's answers to hostile
// files are in test/reliability/snapshot-import.test.ts.
const dir = mkdtempSync(join(tmpdir(), 'snapshot-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A database file made by the emulator's migrations up to `version`, then `sql`. */
function file(version: number, sql = ''): string {
  const db = new Database(':memory:');
  migrate(db, undefined, version);
  if (sql) db.exec(sql);
  const path = join(dir, `${++n}.sqlite`);
  writeFileSync(path, db.serialize());
  db.close();
  return path;
}

const versions = migrationFiles().map((f) => Number.parseInt(f, 10));
const latest = Math.max(...versions);
const older = versions[Math.floor(versions.length / 2)];

describe('snapshot check', () => {
  it('an older emulator database is accepted and brought to this version', () => {
    const path = file(older, "INSERT INTO meta (key, value) VALUES ('kept', 'yes')");
    expect(checkAndMigrate(path)).toEqual({ ok: true, version: older });
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get()).toBe(latest);
    expect(db.prepare("SELECT value FROM meta WHERE key = 'kept'").pluck().get()).toBe('yes');
    db.close();
  });

  it('refuses what the emulator does not make, before running any of it', () => {
    expect(checkAndMigrate(file(latest, 'CREATE TABLE extra (x)'))).toEqual({
      ok: false,
      problem: `does not have the emulator's schema ${latest}: it has a table extra the emulator does not make`,
    });
    expect(checkAndMigrate(file(latest, 'DELETE FROM schema_migrations WHERE version = 1'))).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/lists migrations the emulator did not make/),
    });
    expect(
      checkAndMigrate(file(latest, `INSERT INTO schema_migrations VALUES (${latest + 1}, 'x.sql', 'now')`)),
    ).toEqual({
      ok: false,
      problem: `comes from a newer emulator (schema ${latest + 1}, this one knows up to ${latest})`,
    });
  });

  it('a check that does not end by its deadline is a refusal (the child is killed)', async () => {
    const path = file(latest);
    expect(await checkSnapshotFile(path, 0, 1)).toEqual({
      ok: false,
      problem: 'could not be read within 0.001 s: refused',
    });
    expect(await checkSnapshotFile(path, 0)).toEqual({ ok: true, version: latest });
  });
});
