// The single executable's main script (`npm run build:exe`, scripts/build-exe.ts): Node.js runs it from the executable
// itself, where `require` knows node builtins only. The executable carries the emulator's files as two assets — the
// bundle (dist/), package.json and the runtime packages with their native modules (better-sqlite3's, built for the
// executable's Node) — which it writes once into a private, checked directory and runs from there, as the npm package runs.
// It must import node builtins only (esbuild bundles it alone, as CommonJS).
import * as nodeModule from 'node:module';
import { join, resolve } from 'node:path';
import { getAsset } from 'node:sea';
import { setFlagsFromString } from 'node:v8';
import { privateDirProblem } from './code-cache-dir.ts';
import { exeCacheDir, type PayloadManifest, scriptArgs, unpack } from './exe-payload.ts';

function main(): void {
  const args = process.argv.slice(2);
  const asNode = scriptArgs(args);
  if (asNode) {
    for (const flag of asNode.flags) setFlagsFromString(flag);
    const script = resolve(asNode.script);
    process.argv = [process.execPath, script, ...asNode.rest];
    nodeModule.createRequire(script)(script);
    return;
  }
  const cache = exeCacheDir();
  if (cache.dir === null) {
    process.stderr.write(
      `scalingo-emulator: cannot use its cache directory: ${cache.reason} (set EMULATOR_EXE_CACHE_DIR to a directory only you can write)\n`,
    );
    process.exit(1);
  }
  const manifest = JSON.parse(getAsset('manifest', 'utf8') as string) as PayloadManifest;
  const tree = unpack(cache.dir, manifest, () => Buffer.from(getAsset('payload') as ArrayBuffer));
  const treeProblem = privateDirProblem(tree);
  if (treeProblem) {
    process.stderr.write(`scalingo-emulator: cannot run from ${tree}: it ${treeProblem}\n`);
    process.exit(1);
  }
  // The bundle's chunks through V8's code cache, in the tree itself (private, one per build), as src/boot/main-entry.ts.
  nodeModule.enableCompileCache(join(tree, '.v8-cache'));
  process.argv = [process.execPath, join(tree, 'dist', 'main.cjs'), ...args];
  nodeModule.createRequire(join(tree, 'dist', 'main.cjs'))('./main.cjs');
}

main();
