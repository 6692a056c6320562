// Hostile snapshot files (issue 37), the emulator as a separate process: a snapshot travels (CI artifacts, a
// colleague's repro), so an import is untrusted input. A file whose schema_migrations is an endlessly recursive view
// used to freeze the whole process (health, SIGTERM); an older-looking schema answered 500. Each is now a 422 saying
// what is wrong, the emulator answers meanwhile, and its state is untouched by the refused file.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/db/database.ts';
import { type EmulatorProcess, spawnEmulator } from './emulator-process.ts';

const ADMIN = 'ad-reliability-snapshot-import-0123456789';

/** A database file made by `sql` (SQLite's own bytes, as a user's tool would write them). */
function sqliteFile(sql: string): Buffer {
  const db = new Database(':memory:');
  db.exec(sql);
  const bytes = db.serialize();
  db.close();
  return bytes;
}

const RECURSIVE_VIEW =
  'CREATE TABLE apps (id TEXT PRIMARY KEY); CREATE VIEW schema_migrations AS ' +
  'WITH RECURSIVE r(version) AS (SELECT 1 UNION ALL SELECT version + 1 FROM r) SELECT version FROM r;';
const OLDER_LOOKING =
  'CREATE TABLE schema_migrations (version INTEGER); INSERT INTO schema_migrations VALUES (1), (2); ' +
  'CREATE TABLE apps (id TEXT PRIMARY KEY, name TEXT);';

describe('snapshot import of hostile files (emulator as a separate process)', () => {
  let dir: string;
  let emu: EmulatorProcess;

  const restore = (body: Buffer) =>
    fetch(`${emu.api}/_emulator/snapshots/restore`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/vnd.sqlite3' },
      body: new Uint8Array(body),
    });
  const refusal = async (body: Buffer) => {
    const res = await restore(body);
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as { errors?: { snapshot?: string[] } }, text };
  };
  const appNames = async () =>
    ((await emu.call('GET', '/v1/apps')).body.apps as { name: string }[]).map((a) => a.name).sort();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emu-snapshot-import-'));
    emu = await spawnEmulator(dir, { adminToken: ADMIN, logLevel: 'error' });
    expect((await emu.call('POST', '/v1/apps', { body: { app: { name: 'kept-app' } } })).status).toBe(201);
  }, 60_000);

  const figures: string[] = [];
  afterAll(async () => {
    await emu?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (figures.length) console.log(`[reliability] snapshot import: ${figures.join('; ')}`);
  });

  it('a recursive view as schema_migrations: 422, while the emulator answers; the state is untouched', async () => {
    const refused = refusal(sqliteFile(RECURSIVE_VIEW));
    // Sent while the file is being read: the process answers it (it used to hang until SIGKILL).
    const health = await emu.call('GET', '/_emulator/health', { as: null });
    expect(health.status).toBe(200);
    const { status, body } = await refused;
    expect(status).toBe(422);
    expect(body.errors?.snapshot?.[0]).toMatch(/schema_migrations table is not the emulator/);
    expect(await appNames()).toEqual(['kept-app']);
    expect((await emu.call('GET', '/v1/users/self')).status).toBe(200);
  });

  it('an older-looking schema (schema_migrations(version) only): 422, not 500', async () => {
    const { status, body } = await refusal(sqliteFile(OLDER_LOOKING));
    expect(status).toBe(422);
    expect(body.errors?.snapshot?.[0]).toMatch(/not a database of the emulator/);
    expect(await appNames()).toEqual(['kept-app']);
  });

  it("the emulator's own snapshot with a trigger, a view or a table added: 422 naming it; unchanged, it restores", async () => {
    const snap = await fetch(`${emu.api}/_emulator/snapshots`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(snap.status).toBe(201);
    const { snapshot } = (await snap.json()) as { snapshot: { id: string } };
    const file = Buffer.from(
      await (
        await fetch(`${emu.api}/_emulator/snapshots/${snapshot.id}`, { headers: { authorization: `Bearer ${ADMIN}` } })
      ).arrayBuffer(),
    );
    const withAdded = (sql: string) => {
      // A WAL-mode file opens from memory once marked as a rollback-journal one (header bytes 18-19).
      const copy = Buffer.from(file);
      copy[18] = 1;
      copy[19] = 1;
      const db = new Database(copy);
      db.exec(sql);
      const bytes = db.serialize();
      db.close();
      return bytes;
    };
    const cases: [string, RegExp][] = [
      [
        'CREATE TRIGGER grow AFTER INSERT ON apps BEGIN INSERT INTO apps SELECT * FROM apps; END;',
        /trigger grow the emulator does not make/,
      ],
      ['CREATE VIEW everything AS SELECT * FROM apps;', /view everything the emulator does not make/],
      ['DROP TABLE variables;', /table variables is missing/],
      ['ALTER TABLE apps ADD COLUMN extra TEXT;', /table apps is not the emulator's/],
    ];
    for (const [sql, problem] of cases) {
      const { status, body } = await refusal(withAdded(sql));
      expect(status, sql).toBe(422);
      expect(body.errors?.snapshot?.[0], sql).toMatch(problem);
    }
    expect((await emu.call('POST', '/v1/apps', { body: { app: { name: 'later-app' } } })).status).toBe(201);
    expect((await restore(file)).status).toBe(204);
    expect(await appNames()).toEqual(['kept-app']);
  });

  it('a 50 MB hostile file: 422 while the emulator answers (time and memory printed, README "Reliability")', async () => {
    const hostile = sqliteFile(
      `${RECURSIVE_VIEW} CREATE TABLE junk (b BLOB); ` +
        'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50) ' +
        'INSERT INTO junk SELECT randomblob(1024 * 1024) FROM n;',
    );
    expect(hostile.length).toBeGreaterThan(50 * 1024 * 1024);
    const before = emu.memory();
    const t0 = performance.now();
    const refused = refusal(hostile);
    expect((await emu.call('GET', '/_emulator/health', { as: null })).status).toBe(200);
    const healthMs = performance.now() - t0;
    const { status } = await refused;
    const totalMs = performance.now() - t0;
    expect(status).toBe(422);
    expect(await appNames()).toEqual(['kept-app']);
    const after = emu.memory();
    const mb = (n: number) => (n / 1024 / 1024).toFixed(0);
    figures.push(
      `${mb(hostile.length)} MB hostile file refused in ${totalMs.toFixed(0)} ms (health answered after ${healthMs.toFixed(0)} ms); ` +
        `RSS ${mb(before.rss)} → ${mb(after.rss)} MB, peak ${mb(after.peak)} MB`,
    );
  });
});
