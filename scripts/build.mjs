// Builds what the package ships, as plain JavaScript (no tsx, no build on the user's side):
//   dist/main.mjs        the `scalingo-emulator` command (bin)
//   dist/index.mjs       the programmatic API (`import { startEmulator } from 'scalingo-emulator'`)
//   dist/chunk-*.mjs     code both share (esbuild code splitting)
//   dist/migrations/     the SQL migrations, read from disk next to the code
//   dist/dashboard/      the dashboard's browser bundle and page (served at /_emulator/)
// `npm start` runs it before starting (it rebuilds only when a source is newer); `npm pack` runs it
// through `prepack` with --force. Type declarations are index.d.ts at the package root (kept in sync by a test).
import { build } from 'esbuild';
import { cpSync, existsSync, readdirSync, statSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const outputs = ['main.mjs', 'index.mjs', 'dashboard/app.js', 'migrations'].map((p) => join(dist, p));

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const force = process.argv.includes('--force');
const builtAt = Math.min(...outputs.map((p) => (existsSync(p) ? statSync(p).mtimeMs : 0)));
const stale = force || builtAt === 0 || newest(join(root, 'src')) > builtAt || statSync(join(root, 'package-lock.json')).mtimeMs > builtAt;
if (stale) {
  rmSync(dist, { recursive: true, force: true });
  await build({
    entryPoints: { main: join(root, 'src/main.ts'), index: join(root, 'src/index.ts') },
    outdir: dist,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    splitting: true,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    sourcemap: 'linked',
    sourcesContent: false,
    // Smaller code compiles faster at every start; the source map keeps stack traces readable.
    minify: true,
    keepNames: true,
    logLevel: 'warning',
    // Native addons and optional native helpers stay as packages (the package's only dependencies).
    external: ['better-sqlite3', 'ssh2', 'cpu-features', 'esbuild'],
    // CommonJS dependencies inside an ESM bundle need require().
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  // The dashboard: one browser script, no framework, nothing fetched from a CDN.
  const { buildDashboard } = await import('./build-dashboard.mjs');
  await buildDashboard(join(dist, 'dashboard'));
  mkdirSync(dist, { recursive: true });
  cpSync(join(root, 'src/db/migrations'), join(dist, 'migrations'), { recursive: true });
}
