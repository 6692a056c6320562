import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { LABELS, type ContainerRuntime } from '../../runtime/runtime.ts';
import { packDirectory } from '../../runtime/images.ts';
import type { ImageRecipe } from '../../runtime/image-recipes.ts';
import { dependencyTag, type Language } from './buildpacks.ts';
import { dependencyInputs, dependencyScript } from './build-scripts.ts';
import { buildContainerNetwork, OFFLINE_BUILDS } from './build-network.ts';

// The dependency layer of a buildpack-like build: the image a `docker build` would have after
// `COPY package*.json ./` + `RUN npm ci`. A container of the stack image gets only the files naming the
// dependencies, installs them with the app's build cache bind-mounted at /cache (npm's package cache,
// pip's: mounted, never copied) and no network, and is committed as the app's dependency image. The
// next build reuses that image as long as the inputs, the stack and the step are the same, so a code
// change costs one COPY layer on top of it. One dependency image an app (`deps-<app id>:current`);
// the key lives in its label and in the build cache, so `DELETE …/caches/deployment` rebuilds it.

const BUILD_MEMORY = 2 * 1024 * 1024 * 1024;
const KEY_LABEL = 'io.scalingo-emulator.deps-key';
const KEY_FILE = 'dependency-layer.key';
const LEGACY_CACHE = ['node_modules', 'node_modules.key', 'venv', 'venv.key', 'bundle'];

export interface DependencyBuild {
  runtime: ContainerRuntime;
  instanceId: string;
  appId: string;
  deploymentId: string;
  context: string;
  cacheDir: string;
  stack: ImageRecipe;
  /** Hash of the stack recipe: a rebuilt stack image makes a new dependency layer. */
  stackHash: string;
  /** builds.network: what the step reaches (build-network.ts); absent = offline. */
  network?: string;
  /** Files added to the inputs (a package-lock.json resolved on the host). */
  extra: Record<string, string>;
  say: (line: string) => void;
}

/** The image the code goes on: the app's dependency image (built now or reused), or the stack when there is no such step. */
export async function dependencyLayer(b: DependencyBuild, lang: Language): Promise<string> {
  const inputs = dependencyInputs(lang, b.context);
  if (inputs === null) return b.stack.tag;
  const script = dependencyScript(lang);
  const key = layerKey(b, inputs, script);
  const tag = dependencyTag(b.appId);
  const keyFile = join(b.cacheDir, KEY_FILE);
  const known = existsSync(keyFile) && readFileSync(keyFile, 'utf8') === key;
  if (known && (await b.runtime.imageLabels(tag))?.[KEY_LABEL] === key) {
    b.say('-----> Reusing the dependency layer from the build cache (dependency files unchanged)');
    return tag;
  }
  // What builds before the dependency layer kept in the cache (copies of node_modules, the virtualenv, the gems).
  for (const old of LEGACY_CACHE) rmSync(join(b.cacheDir, old), { recursive: true, force: true });
  const stage = mkdtempSync(join(tmpdir(), 'scalingo-emu-deps-'));
  let engineId: string;
  try {
    for (const f of inputs) cpSync(join(b.context, f), join(stage, f), { recursive: true, verbatimSymlinks: true });
    engineId = await runStep(b, await packDirectory(stage, b.extra), script, lang);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  try {
    // The build container's own labels would be inherited by the app's containers: blanked.
    const changes = [
      'WORKDIR /app',
      'CMD ["sh"]',
      `LABEL ${LABELS.owner}="" ${LABELS.type}="" ${LABELS.deploymentId}=""`,
      `LABEL ${KEY_LABEL}=${key}`,
    ];
    await b.runtime.commit(engineId, { tag, changes });
  } finally {
    removeLater(b.runtime, engineId);
  }
  writeFileSync(keyFile, key);
  return tag;
}

/** Runs the dependency step in a new container; resolves its id once it exited 0 (to be committed). */
async function runStep(b: DependencyBuild, tar: Readable, script: string, lang: Language): Promise<string> {
  const { runtime } = b;
  const info = await runtime.run(
    {
      name: `scalingo-emu-${b.instanceId}-build-${b.deploymentId.toLowerCase()}`,
      image: b.stack.tag,
      cmd: ['sh', '-c', script],
      env: {},
      // Not the instance label: the containers area reconciles (and removes) what carries it.
      labels: {
        [LABELS.owner]: b.instanceId,
        [LABELS.appId]: b.appId,
        [LABELS.type]: 'build',
        [LABELS.deploymentId]: b.deploymentId,
      },
      memoryBytes: BUILD_MEMORY,
      binds: [`${b.cacheDir}:/cache`],
      ...buildContainerNetwork(b.network ?? OFFLINE_BUILDS),
      workingDir: '/app',
    },
    { start: false },
  );
  try {
    await runtime.putArchive(info.engineId, '/app', tar);
    await runtime.start(info.engineId);
    const logs = await runtime.logs(info.engineId, { follow: true });
    // The script's own lines (-----> steps, ! errors, indented details) as they are; tools' output indented.
    for await (const l of logs) if (l.text.trim()) b.say(/^(-----> |!|\s)/.test(l.text) ? l.text : `       ${l.text}`);
    const code = await runtime.wait(info.engineId);
    if (code !== 0) throw new Error(`the ${lang} dependency step exited with code ${code}`);
    return info.engineId;
  } catch (err) {
    removeLater(runtime, info.engineId);
    throw err;
  }
}

/** The container's removal (seconds for a large layer) is not waited for: the next layer does not need it. */
function removeLater(runtime: ContainerRuntime, engineId: string): void {
  void runtime.remove(engineId).catch(() => undefined);
}

function layerKey(b: DependencyBuild, inputs: string[], script: string): string {
  const h = createHash('sha256').update(
    JSON.stringify({ v: 1, stack: b.stack.tag, stackHash: b.stackHash, script, extra: b.extra }),
  );
  const add = (rel: string) => {
    const full = join(b.context, rel);
    const st = lstatSync(full);
    h.update(`\0${rel}\0${st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : 'f'}\0`);
    if (st.isDirectory()) for (const e of readdirSync(full).sort()) add(join(rel, e));
    else if (st.isFile()) h.update(readFileSync(full));
  };
  for (const f of inputs) add(f);
  return h.digest('hex').slice(0, 24);
}
