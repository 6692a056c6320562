import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';

// A parent's DELETE (an app, an addon, a user) looks up each child table by its foreign key column: without an
// index whose first column it is, SQLite scans the whole child table on every delete.
describe('foreign keys', () => {
  it('every foreign key column is the first column of an index', () => {
    const db = openDatabase({ inMemory: true });
    const tables = db
      .prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all();
    const unindexed: string[] = [];
    let checked = 0;
    for (const table of tables) {
      const leading = new Set(
        db
          .prepare<[string], { name: string }>('SELECT name FROM pragma_index_list(?)')
          .all(table)
          .map((i) =>
            db.prepare<[string], string>('SELECT name FROM pragma_index_info(?) WHERE seqno = 0').pluck().get(i.name),
          ),
      );
      for (const fk of db
        .prepare<[string], { from: string; table: string }>('SELECT * FROM pragma_foreign_key_list(?)')
        .all(table)) {
        checked++;
        if (!leading.has(fk.from)) unindexed.push(`${table}.${fk.from} → ${fk.table}`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(unindexed).toEqual([]);
    db.close();
  });
});
