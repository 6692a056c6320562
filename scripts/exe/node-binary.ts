import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { x } from 'tar';
import { runNpm } from '../../src/modules/deployments/host-npm.ts';
import { nodePackageFor, RECOMMENDED_LTS_RANGE } from '../../src/modules/deployments/node-versions.ts';
import { fetchTarball, resolvePublished } from '../../src/modules/deployments/registry-packages.ts';
import { compilerEnv, crossTarget } from './cross.ts';

// The executable's Node.js and its native module: the official binaries of the npm registry's `node-linux-*`
// packages (the same fetch and cache as the app builds, src/modules/deployments/registry-packages.ts), and
// better-sqlite3 compiled against that Node's headers (its add-on is built for one Node ABI, and the build machine's
// Node may be another major; another architecture's, cross-compiled). Kept under
// node_modules/.cache/scalingo-emulator-exe/ by version.

export const EXE_CACHE = join(import.meta.dirname, '..', '..', 'node_modules', '.cache', 'scalingo-emulator-exe');

export interface ExeNode {
  arch: 'x64' | 'arm64';
  version: string;
  /** The package's extracted files: bin/node, include/node (what node-gyp's --nodedir wants). */
  dir: string;
}

/** The newest Node.js of the LTS line the platform recommends (node-versions.ts), for `arch`, extracted once. */
export async function exeNode(arch: 'x64' | 'arm64'): Promise<ExeNode> {
  const name = nodePackageFor(arch);
  const version = await resolvePublished(name, RECOMMENDED_LTS_RANGE);
  if (!version) throw new Error(`the npm registry publishes no ${name} in ${RECOMMENDED_LTS_RANGE}`);
  const dir = join(EXE_CACHE, `${name}@${version}`);
  if (!existsSync(join(dir, 'bin', 'node'))) {
    const tarball = await fetchTarball(name, version, (l) => console.log(`  npm: ${l}`));
    const stage = stageIn(EXE_CACHE);
    // Only what the executable and node-gyp use: the binary and the headers (not npm, corepack, docs).
    await x({ file: tarball, cwd: stage, strict: true, filter: (p) => /^package\/(bin\/node|include\/)/.test(p) });
    placeFirst(join(stage, 'package'), dir);
    rmSync(stage, { recursive: true, force: true });
  }
  return { arch, version, dir };
}

/**
 * better-sqlite3's add-on built against `node`'s headers, by the host's npm (`npm run build-release`: npm puts its own
 * node-gyp on the script's PATH; prebuild-install is not run, its binaries live outside the registry). For another
 * architecture, node-gyp's `--arch` with the cross compiler of scripts/exe/cross.ts as CC/CXX.
 */
export async function sqliteAddon(node: ExeNode): Promise<string> {
  const source = join(import.meta.dirname, '..', '..', 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as { version: string };
  const addon = join(EXE_CACHE, `better-sqlite3@${version}-node-${node.version}-${node.arch}.node`);
  if (existsSync(addon)) return addon;
  const cross = node.arch === hostArch() ? null : crossTarget(node.arch);
  const stage = stageIn(EXE_CACHE);
  try {
    cpSync(source, join(stage, 'better-sqlite3'), { recursive: true, filter: (p) => !p.endsWith(`${source}/build`) });
    console.log(`  compiling better-sqlite3 ${version} for Node.js ${node.version} linux-${node.arch} (a few minutes)`);
    const said: string[] = [];
    const gypArgs = [`--nodedir=${node.dir}`, '--jobs=max', ...(cross ? [`--arch=${node.arch}`] : [])];
    const run = await runNpm(['run', 'build-release', '--', ...gypArgs], {
      cwd: join(stage, 'better-sqlite3'),
      onLine: (l) => said.push(l),
      env: { npm_config_nodedir: node.dir, ...(cross ? compilerEnv(cross) : {}) },
    });
    const built = join(stage, 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    if (run.code !== 0 || !existsSync(built))
      throw new Error(`compiling better-sqlite3 failed (npm run build-release):\n${said.slice(-15).join('\n')}`);
    placeFirst(built, addon);
    return addon;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

export const hostArch = (): 'x64' | 'arm64' | string => process.arch;

function stageIn(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return mkdtempSync(join(dir, '.stage-'));
}

/** Renames into the cache; another build that placed the same file first wins. */
function placeFirst(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (err) {
    if (!existsSync(to)) throw err;
  }
}
