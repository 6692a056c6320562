// Builds what the package ships, as plain JavaScript (no tsx, no build on the user's side):
//   dist/main.mjs        the `scalingo-emulator` command (bin): a small loader (src/boot/) running dist/main.cjs through
//                        V8's code cache (dist/.v8-cache/, written by the command, kept across builds, not packed)
//   dist/index.mjs       the programmatic API (`import { startEmulator } from 'scalingo-emulator'`): re-exports dist/index.cjs
//   dist/*.cjs           the code as CommonJS chunks (esbuild code splitting, then each chunk converted)
//   dist/migrations/     the SQL migrations, read from disk next to the code
//   dist/dashboard/      the dashboard's browser bundle and page (served at /_emulator/)
// `npm start` runs it before starting (it rebuilds only when a source is newer); `npm pack` runs it
// through `prepack` with --force. Type declarations are index.d.ts at the package root (kept in sync by a test).

import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const outputs = ['main.mjs', 'index.mjs', 'dashboard/app.js'].map((p) => join(dist, p));

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * dockerode loads its BuildKit session support (@grpc/grpc-js, protobufjs: ~400 KB, two thirds of the
 * engine client) whatever the call; it is used only by `buildImage` with `version: '2'`, which the
 * emulator never asks for. The bundle gets a stand-in that refuses, so loading the engine client —
 * at the first Docker call after start — costs a third of what it did.
 */
const withoutBuildkitSessions = {
  name: 'without-buildkit-sessions',
  setup(b) {
    b.onResolve({ filter: /^\.\/session$/ }, (args) =>
      /[\\/]dockerode[\\/]lib[\\/]docker\.js$/.test(args.importer)
        ? { path: 'dockerode-session', namespace: 'stub' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({
      contents:
        "module.exports = function withSession(docker, auth, handler) { handler(new Error('BuildKit sessions (buildImage version 2) are not part of the emulator')); };",
      loader: 'js',
    }));
  },
};

/**
 * docker-modem requires its SSH transport (and with it ssh2, whose poly1305 WebAssembly instance alone
 * reserves 16 MB) when it loads, though it only uses it for `ssh://` engines. The bundle requires it at
 * the first such connection instead: an emulator talking to a local socket or TCP never loads ssh2 until
 * a `git push` reaches its own SSH server (src/modules/git/ssh-server.ts loads it there).
 */
const lazyDockerSsh = {
  name: 'lazy-docker-ssh',
  setup(b) {
    b.onResolve({ filter: /^\.\/ssh$/ }, (args) =>
      /[\\/]docker-modem[\\/]lib[\\/]modem\.js$/.test(args.importer)
        ? { path: join(args.resolveDir, 'ssh.js'), namespace: 'lazy-docker-ssh' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-docker-ssh' }, (args) => ({
      contents: `module.exports = function sshAgent(opt) { return require(${JSON.stringify(args.path)})(opt); };`,
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};

/**
 * zod's `z` namespace re-exports every locale's error messages (`z.locales`, 49 languages: 267 KB, a sixth
 * of the bundle) though only English is ever used (zod configures it by default, and the emulator's
 * messages are English). The bundle keeps `en` only: less code to compile at every start, and a smaller
 * peak of the compiler's memory, which the process keeps afterwards.
 */
const englishZodOnly = {
  name: 'english-zod-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(args.importer)
        ? { path: join(args.resolveDir, '../locales/index.js'), namespace: 'english-zod-only' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'english-zod-only' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};

/**
 * The largest dependencies as entries of their own: code splitting then puts each in its own chunk instead of
 * one 1.1 MB chunk with the emulator's code. V8 compiles a module at once, with scratch memory in proportion
 * to its size, and the process keeps the peak of that memory (malloc does not give it back): 9 MiB for the one
 * chunk, 3.7 MiB once split. A dist/vendor/*.cjs is loaded only where the code imports its package with `import()` (jose).
 */
const vendorEntries = Object.fromEntries(
  ['zod', 're2js', '@hono/zod-openapi', 'pino', 'jose', 'hono'].map((p) => [`vendor/${p.replace(/^@hono\//, '')}`, p]),
);

const force = process.argv.includes('--force');
const builtAt = Math.min(...outputs.map((p) => (existsSync(p) ? statSync(p).mtimeMs : 0)));
const stale =
  force ||
  builtAt === 0 ||
  newest(join(root, 'src')) > builtAt ||
  statSync(join(root, 'package-lock.json')).mtimeMs > builtAt;
if (stale) {
  const files = await buildCommonJs();
  files.set(join(dist, 'main.mjs'), await buildCommand());
  // The programmatic API: node's ES module loader reads the CommonJS entry's export names (esbuild annotates them).
  files.set(join(dist, 'index.mjs'), Buffer.from("export * from './index.cjs';\n"));
  // The dashboard: one browser script, no framework, nothing fetched from a CDN.
  const { bundleDashboard } = await import('./build-dashboard.mjs');
  for (const [name, text] of Object.entries(await bundleDashboard()))
    files.set(join(dist, 'dashboard', name), Buffer.from(text));
  // The migrations are read from disk next to the code.
  for (const name of readdirSync(join(root, 'src/db/migrations')))
    files.set(join(dist, 'migrations', name), readFileSync(join(root, 'src/db/migrations', name)));
  publish(files);
}

/**
 * Writes the build into dist/ without ever leaving a file half-written or missing: a process
 * running from dist/ meanwhile (a test, `npm start`) keeps loading its chunks. Unchanged files are
 * left alone, changed ones replaced by rename, files of older builds removed last.
 */
function publish(files) {
  for (const [path, contents] of files) {
    mkdirSync(dirname(path), { recursive: true });
    if (existsSync(path) && Buffer.compare(readFileSync(path), contents) === 0) {
      utimesSync(path, new Date(), new Date()); // fresh for the staleness check
      continue;
    }
    const tmp = `${path}.${process.pid}.tmp`;
    // The command (dist/main.mjs, with its #! line) is executable.
    writeFileSync(tmp, contents, { mode: contents[0] === 0x23 && contents[1] === 0x21 ? 0o755 : 0o644 });
    renameSync(tmp, path);
  }
  const keep = new Set(files.keys());
  const sweep = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.name === '.v8-cache') continue; // the command's code cache: it sweeps its own stale files
      if (e.name.startsWith('scalingo-emulator-linux-')) continue; // the executables (scripts/build-exe.ts) and their stamps
      if (e.isDirectory()) sweep(p);
      else if (!keep.has(p)) rmSync(p, { force: true });
    }
  };
  sweep(dist);
}

/**
 * The emulator's code as CommonJS chunks (dist/main.cjs, dist/index.cjs, dist/chunk-*.cjs), which V8's code cache can
 * serve on Node 20 (it has none for ES modules). esbuild splits ES modules only, so the sources are bundled and split
 * as ES modules first (into a temporary directory), then each chunk is converted on its own: static imports become
 * `require('./chunk-….cjs')` of its siblings, `import()` of a lazy chunk a `require` at that moment (the code splitting,
 * and with it what a start does not load, is kept), `import.meta.url` the chunk's file URL. The source maps of both
 * steps are chained (esbuild reads the first step's linked maps).
 */
async function buildCommonJs() {
  const esm = join(root, 'node_modules', '.cache', `scalingo-emulator-esm-${process.pid}`);
  rmSync(esm, { recursive: true, force: true });
  try {
    const split = await build({
      entryPoints: {
        main: join(root, 'src/main.ts'),
        index: join(root, 'src/index.ts'),
        // The snapshot check's child process (src/modules/control/snapshot-check-process.ts starts it).
        'snapshot-check': join(root, 'src/modules/control/snapshot-check-child.ts'),
        ...vendorEntries,
      },
      outdir: esm,
      outExtension: { '.js': '.cjs' },
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
      metafile: true,
      // Native addons and optional native helpers stay as packages (the package's only dependencies).
      external: ['better-sqlite3', 'ssh2', 'cpu-features', 'esbuild'],
      plugins: [withoutBuildkitSessions, lazyDockerSsh, englishZodOnly],
    });
    const chunks = Object.keys(split.metafile.outputs).filter((p) => p.endsWith('.cjs'));
    const result = await build({
      entryPoints: chunks.map((p) => join(root, p)),
      outdir: dist,
      outbase: esm,
      write: false,
      bundle: false,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      outExtension: { '.js': '.cjs' },
      // import() of a chunk must be a require of it: node's ES module loader would load the chunk a second time.
      supported: { 'dynamic-import': false },
      define: { 'import.meta.url': '__importMetaUrl' },
      banner: { js: "var __importMetaUrl=require('node:url').pathToFileURL(__filename).href;" },
      sourcemap: 'linked',
      sourcesContent: false,
      minify: true,
      keepNames: true,
      logLevel: 'warning',
    });
    // A chunk is compiled inside a function (node's CommonJS wrapper, or src/boot/chunk-loader.ts's): no #! line there.
    return new Map(
      result.outputFiles.map((f) => [f.path, f.path.endsWith('.cjs') ? withoutHashbang(f.contents) : f.contents]),
    );
  } finally {
    rmSync(esm, { recursive: true, force: true });
  }
}

function withoutHashbang(contents) {
  return contents[0] === 0x23 && contents[1] === 0x21
    ? Buffer.concat([Buffer.from('//'), contents.subarray(2)])
    : contents;
}

/** The command, dist/main.mjs: a small ES module that loads the CommonJS chunks through V8's code cache. */
async function buildCommand() {
  const result = await build({
    entryPoints: [join(root, 'src/boot/main-entry.ts')],
    write: false,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    minify: true,
    logLevel: 'warning',
    banner: { js: '#!/usr/bin/env node' },
  });
  return result.outputFiles[0].contents;
}
