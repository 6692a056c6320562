// `npm run build:exe [-- --arch x64|arm64|all]` → dist/scalingo-emulator-linux-<arch>: the emulator as one executable
// file (Node.js single executable applications: a blob made by the executable's own Node with --experimental-sea-config,
// injected into a copy of that Node by postject; for another architecture than this machine's, cross-compiled and made
// under QEMU: scripts/exe/cross.ts). The main script is src/boot/exe-entry.ts; what it carries,
// scripts/exe/payload.ts; its Node and native module, scripts/exe/node-binary.ts. An executable whose inputs (Node
// version, payload, main script) have not changed is kept: `dist/scalingo-emulator-linux-<arch>.inputs` holds their hash.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { crossTarget, underEmulation } from './exe/cross.ts';
import { EXE_CACHE, type ExeNode, exeNode, hostArch, sqliteAddon } from './exe/node-binary.ts';
import { collectPayload } from './exe/payload.ts';

const ROOT = join(import.meta.dirname, '..');
const DIST = join(ROOT, 'dist');
/** The sentinel Node.js looks for in its binary to know a blob was injected (Node.js docs, Single executable applications). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

export const exePath = (arch: string): string => join(DIST, `scalingo-emulator-linux-${arch}`);

/** Builds (or keeps) the executable for `arch`; returns its path. */
export async function buildExe(arch: 'x64' | 'arm64'): Promise<string> {
  const bundle = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  if (bundle.status !== 0) throw new Error('the bundle did not build (scripts/build.mjs)');
  const node = await exeNode(arch);
  const addon = await sqliteAddon(node);
  const payload = collectPayload(addon);
  const main = await mainScript();
  const inputs = createHash('sha256').update(`${node.version}\0${payload.manifest.hash}\0`).update(main).digest('hex');
  const out = exePath(arch);
  if (existsSync(out) && readIfExists(`${out}.inputs`) === inputs) return out;

  const work = join(EXE_CACHE, `work-${arch}-${process.pid}`);
  mkdirSync(work, { recursive: true });
  try {
    writeFileSync(join(work, 'main.cjs'), main);
    writeFileSync(join(work, 'manifest.json'), JSON.stringify(payload.manifest));
    writeFileSync(join(work, 'payload.bin'), payload.bytes);
    writeFileSync(
      join(work, 'sea-config.json'),
      JSON.stringify({
        main: join(work, 'main.cjs'),
        output: join(work, 'sea.blob'),
        disableExperimentalSEAWarning: true,
        assets: { manifest: join(work, 'manifest.json'), payload: join(work, 'payload.bin') },
      }),
    );
    makeBlob(node, work);
    const exe = join(work, 'exe');
    copyFileSync(join(node.dir, 'bin', 'node'), exe);
    const inject = spawnSync(
      join(ROOT, 'node_modules', '.bin', 'postject'),
      [exe, 'NODE_SEA_BLOB', join(work, 'sea.blob'), '--sentinel-fuse', SEA_FUSE],
      { encoding: 'utf8' },
    );
    if (inject.status !== 0) throw new Error(`postject failed: ${inject.stderr || inject.stdout}`);
    mkdirSync(DIST, { recursive: true });
    renameSync(exe, out);
    writeFileSync(`${out}.inputs`, inputs);
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The blob is made by the executable's own Node (its format is that version's); another architecture's runs under QEMU
 * (scripts/exe/cross.ts). Without code cache or snapshot (neither is asked for) the blob holds no machine code.
 */
function makeBlob(node: ExeNode, work: string): void {
  const nodeBin = join(node.dir, 'bin', 'node');
  const [command, ...prefix] = node.arch === hostArch() ? [nodeBin] : underEmulation(crossTarget(node.arch), nodeBin);
  const run = spawnSync(command, [...prefix, '--experimental-sea-config', join(work, 'sea-config.json')], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`node --experimental-sea-config failed: ${run.stderr || run.stdout}`);
}

/** src/boot/exe-entry.ts as one CommonJS script (a single executable's main script must be one). */
async function mainScript(): Promise<Buffer> {
  const result = await build({
    entryPoints: [join(ROOT, 'src', 'boot', 'exe-entry.ts')],
    write: false,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    minify: true,
    logLevel: 'warning',
  });
  return Buffer.from(result.outputFiles[0].contents);
}

const readIfExists = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : null);

if (process.argv[1] === import.meta.filename) {
  const { values } = parseArgs({ options: { arch: { type: 'string', default: hostArch() } } });
  const arches = values.arch === 'all' ? (['x64', 'arm64'] as const) : [values.arch];
  let failed = false;
  for (const arch of arches) {
    if (arch !== 'x64' && arch !== 'arm64') {
      console.error(`--arch: x64, arm64 or all, not "${arch}"`);
      process.exit(2);
    }
    try {
      console.log(`${await buildExe(arch)} (linux-${arch})`);
    } catch (err) {
      console.error(`linux-${arch}: not built: ${(err as Error).message}`);
      failed = true;
    }
  }
  process.exit(failed ? 1 : 0);
}
