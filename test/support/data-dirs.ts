import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from '../../src/db/database.ts';

/** The instance id a data dir's emulator labels its engine objects with, once it made its database. */
export function instanceOfDataDir(dataDir: string): string | null {
  const file = join(dataDir, 'emulator.sqlite');
  if (!existsSync(file)) return null;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT value FROM meta WHERE key = 'instance_id'").pluck().get() as string) ?? null;
  } finally {
    db.close();
  }
}

/** The instance ids of the data dirs under `root`, a few levels down (`--data-dir`s, up's `.emulator-data` in a project). */
export function instancesUnder(root: string, depth = 3): string[] {
  if (!existsSync(root)) return [];
  const own = instanceOfDataDir(root);
  const below =
    depth > 0
      ? readdirSync(root, { withFileTypes: true })
          .filter((e) => e.isDirectory() && e.name !== 'node_modules')
          .flatMap((e) => instancesUnder(join(root, e.name), depth - 1))
      : [];
  return own ? [own, ...below] : below;
}
