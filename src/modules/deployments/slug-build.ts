import { mkdirSync } from 'node:fs';
import type { ContainerRuntime } from '../../runtime/runtime.ts';
import { recipeHash, stackRecipe } from '../../runtime/image-recipes.ts';
import { ensureRecipeImage } from '../../runtime/recipe-images.ts';
import { debianSuite } from '../../runtime/rootfs.ts';
import { defaultProcessTypes, type Language } from './buildpacks.ts';
import { dependencyLayer } from './dependency-layer.ts';
import { addCode, dependencyStep } from './code-step.ts';
import { requestedVersion, resolveVersion, STACK_VERSIONS } from './runtime-versions.ts';
import { defined } from '../../shared/defined.ts';

// A buildpack-like build, in the layers a `docker build` of the app would make: the stack image of the
// runtime version the app asks for (runtime-versions.ts), the app's dependency layer (built once and
// reused while the dependency files are unchanged: dependency-layer.ts), then the code as one COPY
// layer (plus the code step, e.g. `npm run build`, without network) built by the engine's builder.
// One-offs and all process types then run on that image.

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
  /** builds.network: what the steps reach (build-network.ts); absent = offline. */
  network?: string;
  say: (line: string) => void;
}

const TITLES: Record<Language, string> = { node: 'Node.js', python: 'Python', ruby: 'Ruby' };

/** Builds the image; resolves the process types (Procfile over the language's defaults). */
export async function buildpackBuild(b: BuildpackBuild, lang: Language): Promise<Record<string, string>> {
  const { runtime, say } = b;
  say(`-----> ${TITLES[lang]} app detected`);
  const request = requestedVersion(lang, b.context);
  const version = request ? resolveVersion(lang, request) : null;
  const suite = version && version.suite !== debianSuite() ? version.suite : undefined;
  const stack = defined(stackRecipe(lang, suite), `the ${lang} stack recipe`);
  const installed = version ?? STACK_VERSIONS[lang].find((v) => v.suite === debianSuite());
  const asked = request ? ` (${request.from} asks for ${request.wanted})` : '';
  // A host of a suite the table does not know (testing, unstable) has its own version in the default stack.
  const what = installed
    ? `${TITLES[lang]} ${installed.version} from Debian ${installed.suite}`
    : `the ${TITLES[lang]} of Debian ${debianSuite()}`;
  say(`       Using ${what}${asked}`);
  await ensureRecipeImage(runtime, stack, {
    onStart: (r) => say(`-----> Building the ${r.title} image (first use)…`),
    onLine: (l) => say(`       ${l}`),
  });
  mkdirSync(b.cacheDir, { recursive: true });
  const steps = await dependencyStep(b, lang);
  const stackHash = recipeHash(stack, stack.suite ?? debianSuite());
  const base = steps.dependencies
    ? await dependencyLayer({ ...b, stack, stackHash, env: b.env ?? {} }, steps.dependencies)
    : stack.tag;
  await addCode(b, base, steps.code);
  say('-----> Build finished');
  const types = { ...defaultProcessTypes(lang, b.context), ...(b.procfile ?? {}) };
  if (!Object.keys(types).length)
    throw new Error(
      `no Procfile and no default web process for this ${lang} app: add a Procfile (e.g. \`web: <command>\`)`,
    );
  return types;
}
