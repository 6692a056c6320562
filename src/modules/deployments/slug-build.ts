import { mkdirSync } from 'node:fs';
import { type ImageRecipe, recipeHash, stackRecipe } from '../../runtime/image-recipes.ts';
import { ensureRecipeImage } from '../../runtime/recipe-images.ts';
import { type ImageSource } from '../../runtime/registry-images.ts';
import { debianSuite } from '../../runtime/rootfs.ts';
import { type ContainerRuntime } from '../../runtime/runtime.ts';
import { defined } from '../../shared/defined.ts';
import { defaultProcessTypes, type Language } from './buildpacks.ts';
import { addCode, type BuildSteps, dependencyStep } from './code-step.ts';
import { dependencyLayer } from './dependency-layer.ts';
import { ensureNodeImage, resolveNodeRuntime } from './node-runtime.ts';
import { requestedVersion, resolveVersion, STACK_VERSIONS, type StackLanguage } from './runtime-versions.ts';

// A buildpack-like build, in the layers a `docker build` of the app would make: the stack image of the
// runtime version the app asks for (Python, Ruby: runtime-versions.ts; Node.js: the stack with the
// official binary of that version on top, node-runtime.ts), the app's dependency layer (built once and
// reused while the dependency files are unchanged: dependency-layer.ts), then the code: one COPY layer
// built by the engine's builder, or, when the build has a code step (a Node.js build script, the prune,
// the cleanup), that step run over the code in a container and committed (code-step.ts). One-offs and
// all process types then run on that image.

export interface BuildpackBuild {
  runtime: ContainerRuntime;
  instanceId: string;
  appId: string;
  deploymentId: string;
  context: string;
  cacheDir: string;
  tag: string;
  /** Labels the image carries (instance, app, deployment), as a `docker build` would set them. */
  labels: Record<string, string>;
  procfile: Record<string, string> | null;
  /** The app's environment variables, visible to the build as on the platform (none when absent). */
  env?: Record<string, string>;
  /** images.source: where the stack image comes from when the engine lacks it. */
  imageSource?: ImageSource;
  /** builds.network: what the steps reach (build-network.ts); absent = offline. */
  network?: string;
  /** Aborted when the emulator stops: the host's package downloads end then. */
  signal?: AbortSignal;
  /** The Node.js version the build runs, once resolved: the package managers' versions must accept it. */
  nodeVersion?: string;
  say: (line: string) => void;
}

const TITLES: Record<Language, string> = { node: 'Node.js', python: 'Python', ruby: 'Ruby' };

/** Builds the image; resolves the process types (Procfile over the language's defaults). */
export async function buildpackBuild(b: BuildpackBuild, lang: Language): Promise<Record<string, string>> {
  const { runtime, say } = b;
  say(`-----> ${TITLES[lang]} app detected`);
  const stack =
    lang === 'node' ? defined(stackRecipe(lang), 'the node stack recipe') : debianStack(lang, b.context, say);
  await ensureRecipeImage(runtime, stack, {
    source: b.imageSource,
    onStart: (r) => say(`-----> Building the ${r.title} image (first use)…`),
    onLine: (l) => say(`       ${l}`),
  });
  let stackHash = recipeHash(stack, stack.suite ?? debianSuite());
  let base = stack;
  mkdirSync(b.cacheDir, { recursive: true });
  let steps: BuildSteps;
  if (lang === 'node') {
    // The Node.js the app asks for goes on the stack: the dependency layer builds on that image. Its
    // fetch and image are made while the host fetches the app's packages (their lines after its).
    const nodeBuild = { runtime, instanceId: b.instanceId, stack, stackHash, context: b.context, env: b.env, say };
    const plan = await resolveNodeRuntime(nodeBuild);
    const held: string[] = [];
    const [node, planned] = await Promise.allSettled([
      ensureNodeImage(nodeBuild, plan),
      dependencyStep({ ...b, nodeVersion: plan.node, say: (l) => held.push(l) }, lang),
    ]);
    for (const l of held) say(l);
    if (node.status === 'rejected') throw node.reason;
    if (planned.status === 'rejected') throw planned.reason;
    base = { ...stack, tag: node.value.tag };
    stackHash = node.value.key;
    steps = planned.value;
  } else steps = await dependencyStep(b, lang);
  const deps = steps.dependencies
    ? await dependencyLayer({ ...b, stack: base, stackHash, env: b.env ?? {} }, steps.dependencies)
    : base.tag;
  await addCode(b, deps, steps.code);
  say('-----> Build finished');
  const types = { ...defaultProcessTypes(lang, b.context), ...(b.procfile ?? {}) };
  if (!Object.keys(types).length)
    throw new Error(
      `no Procfile and no default web process for this ${lang} app: add a Procfile (e.g. \`web: <command>\`)`,
    );
  return types;
}

/** The Python or Ruby stack of the Debian suite whose version the app asks for (runtime-versions.ts). */
function debianStack(lang: StackLanguage, context: string, say: (line: string) => void): ImageRecipe {
  const request = requestedVersion(lang, context);
  const version = request ? resolveVersion(lang, request) : null;
  const suite = version && version.suite !== debianSuite() ? version.suite : undefined;
  const installed = version ?? STACK_VERSIONS[lang].find((v) => v.suite === debianSuite());
  const asked = request ? ` (${request.from} asks for ${request.wanted})` : '';
  // A host of a suite the table does not know (testing, unstable) has its own version in the default stack.
  const what = installed
    ? `${TITLES[lang]} ${installed.version} from Debian ${installed.suite}`
    : `the ${TITLES[lang]} of Debian ${debianSuite()}`;
  say(`       Using ${what}${asked}`);
  return defined(stackRecipe(lang, suite), `the ${lang} stack recipe`);
}
