import { mkdirSync } from 'node:fs';
import { LABELS, type ContainerRuntime } from '../../runtime/runtime.ts';
import { packDirectory } from '../../runtime/images.ts';
import { findRecipe } from '../../runtime/image-recipes.ts';
import { ensureRecipeImage } from '../../runtime/recipe-images.ts';
import { compileScript, defaultProcessTypes, detectLanguage, type Language } from './buildpacks.ts';
import { prefetchNpm } from './npm-prefetch.ts';
import { defined } from '../../shared/defined.ts';

// A buildpack-like build: a container of the language's stack image (no network, the app's build
// cache mounted at /cache) gets the code in /app, runs the compile script with its output streamed
// as the deployment's output, and is committed as the app's image. One-offs and all process types
// then run on that same image.

const BUILD_MEMORY = 2 * 1024 * 1024 * 1024;

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
  say: (line: string) => void;
}

/** The language of the code, or null when no buildpack applies (then the Procfile-only build runs). */
export const languageOf = (context: string): Language | null => detectLanguage(context);

/** Builds the image; resolves the process types (Procfile over the language's defaults). */
export async function buildpackBuild(b: BuildpackBuild, lang: Language): Promise<Record<string, string>> {
  const recipe = defined(findRecipe(lang), `the ${lang} stack recipe`);
  const { runtime, say } = b;
  await ensureRecipeImage(runtime, recipe, {
    onStart: (r) => say(`-----> Building the ${r.title} image (first use)…`),
    onLine: (l) => say(`       ${l}`),
  });
  mkdirSync(b.cacheDir, { recursive: true });
  const extra = lang === 'node' ? await prefetchNpm(b.context, b.cacheDir, say) : {};
  const info = await runtime.run(
    {
      name: `scalingo-emu-${b.instanceId}-build-${b.deploymentId.toLowerCase()}`,
      image: recipe.tag,
      cmd: ['sh', '-c', compileScript(lang)],
      env: {},
      // Not the instance label: the containers area reconciles (and removes) what carries it.
      labels: { [LABELS.owner]: b.instanceId, [LABELS.appId]: b.appId, [LABELS.type]: 'build', [LABELS.deploymentId]: b.deploymentId },
      memoryBytes: BUILD_MEMORY,
      binds: [`${b.cacheDir}:/cache`],
      networkNone: true,
      workingDir: '/app',
    },
    { start: false },
  );
  try {
    await runtime.putArchive(info.engineId, '/app', await packDirectory(b.context, extra));
    await runtime.start(info.engineId);
    const logs = await runtime.logs(info.engineId, { follow: true });
    // The script's own lines (-----> steps, ! errors, indented details) as they are; tools' output indented.
    for await (const l of logs) if (l.text.trim()) say(/^(-----> |!|\s)/.test(l.text) ? l.text : `       ${l.text}`);
    const code = await runtime.wait(info.engineId);
    if (code !== 0) throw new Error(`the ${lang} build exited with code ${code}`);
    await runtime.commit(info.engineId, {
      tag: b.tag,
      // The build container's own labels would be inherited by the app's containers: blanked.
      changes: ['WORKDIR /app', 'CMD ["sh"]', `LABEL ${LABELS.owner}="" ${LABELS.type}=""`, ...Object.entries(b.labels).map(([k, v]) => `LABEL ${k}=${v}`)],
    });
  } finally {
    await runtime.remove(info.engineId).catch(() => undefined);
  }
  const types = { ...defaultProcessTypes(lang, b.context), ...(b.procfile ?? {}) };
  if (!Object.keys(types).length) throw new Error(`no Procfile and no default web process for this ${lang} app: add a Procfile (e.g. \`web: <command>\`)`);
  return types;
}
