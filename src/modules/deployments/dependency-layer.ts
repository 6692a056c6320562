import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type ImageRecipe } from '../../runtime/image-recipes.ts';
import { packDirectory } from '../../runtime/images.ts';
import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { commitStep, runBuildStep } from './build-container.ts';
import { dependencyTag } from './buildpacks.ts';

// The dependency layer of a buildpack-like build: the image a `docker build` would have after
// `COPY package*.json ./` + `RUN npm ci`. A container of the stack image gets only the files naming the
// dependencies, installs them with the app's build cache bind-mounted at /cache (npm's package cache,
// pip's: mounted, never copied) and the network of builds.network (none by default), and is committed as the app's dependency image. The
// next build reuses that image as long as the inputs, the stack, the step and the app's environment
// are the same, so a code change costs one COPY layer on top of it. One dependency image an app
// (`deps-<app id>:current`); the key lives in its label and in the build cache, so
// `DELETE …/caches/deployment` rebuilds it.

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
  /** The app's environment, visible to the step. */
  env: Record<string, string>;
  /** builds.network: what the step reaches (build-network.ts); absent = offline. */
  network?: string;
  say: (line: string) => void;
}

export interface DependencyStep {
  /** Files and directories of the app the step gets. */
  inputs: string[];
  script: string;
  /** Files added to the inputs (a package-lock.json resolved on the host). */
  extra: Record<string, string>;
  /** false: built again even when its key is known (NODE_MODULES_CACHE=false). */
  reuse: boolean;
  what: string;
}

/** The image the code goes on: the app's dependency image, built now or reused. */
export async function dependencyLayer(b: DependencyBuild, step: DependencyStep): Promise<string> {
  const key = layerKey(b, step);
  const tag = dependencyTag(b.appId);
  const keyFile = join(b.cacheDir, KEY_FILE);
  const known = step.reuse && existsSync(keyFile) && readFileSync(keyFile, 'utf8') === key;
  if (known && (await b.runtime.imageLabels(tag))?.[KEY_LABEL] === key) {
    b.say('-----> Reusing the dependency layer from the build cache (dependency files unchanged)');
    return tag;
  }
  // What builds before the dependency layer kept in the cache (copies of node_modules, the virtualenv, the gems).
  for (const old of LEGACY_CACHE) rmSync(join(b.cacheDir, old), { recursive: true, force: true });
  rmSync(keyFile, { force: true });
  const stage = mkdtempSync(join(tmpdir(), 'scalingo-emu-deps-'));
  let engineId: string;
  try {
    for (const f of step.inputs) {
      mkdirSync(dirname(join(stage, f)), { recursive: true });
      cpSync(join(b.context, f), join(stage, f), { recursive: true, verbatimSymlinks: true });
    }
    engineId = await runBuildStep(b, {
      image: b.stack.tag,
      files: await packDirectory(stage, step.extra),
      script: step.script,
      env: b.env,
      what: step.what,
      name: 'build',
    });
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  // The build container's own labels would be inherited by the app's containers: blanked.
  const blank = { [LABELS.owner]: '', [LABELS.type]: '', [LABELS.deploymentId]: '' };
  await commitStep(b.runtime, engineId, tag, { ...blank, [KEY_LABEL]: key });
  writeFileSync(keyFile, key);
  return tag;
}

function layerKey(b: DependencyBuild, step: DependencyStep): string {
  const h = createHash('sha256').update(
    JSON.stringify({
      v: 2,
      stack: b.stack.tag,
      stackHash: b.stackHash,
      script: step.script,
      extra: step.extra,
      env: b.env,
    }),
  );
  const add = (rel: string) => {
    const full = join(b.context, rel);
    const st = lstatSync(full);
    h.update(`\0${rel}\0${st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : 'f'}\0`);
    if (st.isDirectory()) for (const e of readdirSync(full).sort()) add(join(rel, e));
    else if (st.isFile()) h.update(readFileSync(full));
  };
  for (const f of step.inputs) add(f);
  return h.digest('hex').slice(0, 24);
}
