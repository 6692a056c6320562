// Bundles src/main.ts into dist/main.mjs with esbuild so `npm start` loads one file instead of
// transforming ~100 TypeScript modules at every start. Rebuilds only when a source is newer.
import { build } from 'esbuild';
import { cpSync, existsSync, readdirSync, statSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist/main.mjs');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const force = process.argv.includes('--force');
const stale = force || !existsSync(out) || newest(join(root, 'src')) > statSync(out).mtimeMs || statSync(join(root, 'package-lock.json')).mtimeMs > statSync(out).mtimeMs;
if (stale) {
  await build({
    entryPoints: [join(root, 'src/main.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    sourcemap: 'linked',
    // Smaller code compiles faster at every start; the source map keeps stack traces readable.
    minify: true,
    keepNames: true,
    logLevel: 'warning',
    // Native addons and optional native helpers stay as packages.
    external: ['better-sqlite3', 'ssh2', 'cpu-features'],
    // CommonJS dependencies inside an ESM bundle need require().
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  // The migrations are read from disk next to the code (src/db/ when run from sources, dist/ here).
  mkdirSync(join(root, 'dist'), { recursive: true });
  cpSync(join(root, 'src/db/migrations'), join(root, 'dist/migrations'), { recursive: true });
}
