import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { type PayloadFile, type PayloadManifest } from '../../src/boot/exe-payload.ts';

// What the executable carries (src/boot/exe-entry.ts writes it out and runs it): the tree the npm package runs from —
// package.json, dist/ as scripts/build.mjs made it, and the packages it requires at run time (the package's
// `dependencies` and theirs) — with better-sqlite3's add-on replaced by the one built for the executable's Node.

const ROOT = join(import.meta.dirname, '..', '..');

/** Install-time only (better-sqlite3's download of prebuilt binaries): never required by the running emulator. */
const INSTALL_ONLY = new Set(['prebuild-install']);

export interface Payload {
  manifest: PayloadManifest;
  bytes: Buffer;
}

export function collectPayload(sqliteAddon: string): Payload {
  const entries = new Map<string, string>(); // path in the tree → file on disk
  entries.set('package.json', join(ROOT, 'package.json'));
  addTree(entries, join(ROOT, 'dist'), (name, rel) => {
    // The code cache is made per machine; source maps are for debugging the sources; executables are the output.
    return !(
      name === '.v8-cache' ||
      name.endsWith('.map') ||
      (rel === name && name.startsWith('scalingo-emulator-linux-'))
    );
  });
  for (const pkg of runtimePackages()) {
    const skip = pkg === 'better-sqlite3' ? new Set(['build', 'deps', 'src']) : new Set(['build']);
    addTree(entries, join(ROOT, 'node_modules', pkg), (name, rel) => !(rel === name && skip.has(name)));
  }
  entries.set('node_modules/better-sqlite3/build/Release/better_sqlite3.node', sqliteAddon);

  const files: PayloadFile[] = [];
  const chunks: Buffer[] = [];
  const hash = createHash('sha256');
  let offset = 0;
  for (const [path, from] of [...entries].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const bytes = readFileSync(from);
    const exec = (statSync(from).mode & 0o100) !== 0;
    files.push({ path, offset, size: bytes.length, exec });
    chunks.push(bytes);
    hash.update(`${path}\0${bytes.length}\0${exec}\0`).update(bytes);
    offset += bytes.length;
  }
  return { manifest: { hash: hash.digest('hex').slice(0, 16), files }, bytes: Buffer.concat(chunks) };
}

/** The package's `dependencies`, and theirs, as npm installed them at the top of node_modules/. */
function runtimePackages(): string[] {
  const seen = new Set<string>();
  const visit = (pkgJson: string) => {
    const deps = (JSON.parse(readFileSync(pkgJson, 'utf8')) as { dependencies?: Record<string, string> }).dependencies;
    for (const name of Object.keys(deps ?? {})) {
      if (seen.has(name) || INSTALL_ONLY.has(name)) continue;
      seen.add(name);
      visit(join(ROOT, 'node_modules', name, 'package.json'));
    }
  };
  visit(join(ROOT, 'package.json'));
  return [...seen];
}

/** Every file under `dir` into `entries` (by its path relative to ROOT), where `keep(name, path relative to dir)` says so. */
function addTree(entries: Map<string, string>, dir: string, keep: (name: string, rel: string) => boolean): void {
  const walk = (at: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, e.name);
      const rel = relative(dir, path).split(sep).join('/');
      if (!keep(e.name, rel)) continue;
      if (e.isDirectory()) walk(path);
      else if (e.isFile()) entries.set(relative(ROOT, path).split(sep).join('/'), path);
    }
  };
  walk(dir);
}
