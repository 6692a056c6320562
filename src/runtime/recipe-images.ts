import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContainerRuntime } from './runtime.ts';
import { IMAGE_RECIPES, RECIPE_LABEL, recipeHash, type ImageRecipe } from './image-recipes.ts';
import { buildRootfs, debianSuite } from './rootfs.ts';

// Images from recipes, built once and cached by the recipe hash in the image's label: `npm run
// images` builds them ahead (with progress), the emulator builds a missing one on first use
// (a deployment's output or an addon's provisioning shows the progress). One build per tag at once.

const inFlight = new Map<string, Promise<boolean>>();

/** Whether the engine has the image built from this very recipe. */
export async function recipeImageCurrent(runtime: ContainerRuntime, recipe: ImageRecipe): Promise<boolean> {
  const labels = await runtime.imageLabels(recipe.tag);
  return labels?.[RECIPE_LABEL] === recipeHash(recipe, debianSuite());
}

/** Ids of the recipes whose image is missing or out of date on the engine. */
export async function missingRecipeImages(runtime: ContainerRuntime): Promise<string[]> {
  const out: string[] = [];
  for (const r of IMAGE_RECIPES) if (!(await recipeImageCurrent(runtime, r))) out.push(r.id);
  return out;
}

/** Builds the recipe's image unless current. Resolves true when it built. */
export function ensureRecipeImage(runtime: ContainerRuntime, recipe: ImageRecipe, onLine: (line: string) => void = () => undefined): Promise<boolean> {
  const running = inFlight.get(recipe.tag);
  if (running) {
    onLine(`${recipe.tag}: waiting for the build already under way`);
    return running.then(() => false);
  }
  const p = build(runtime, recipe, onLine).finally(() => inFlight.delete(recipe.tag));
  inFlight.set(recipe.tag, p);
  return p;
}

async function build(runtime: ContainerRuntime, recipe: ImageRecipe, onLine: (line: string) => void): Promise<boolean> {
  if (await recipeImageCurrent(runtime, recipe)) return false;
  const suite = debianSuite();
  const hash = recipeHash(recipe, suite);
  const dir = mkdtempSync(join(tmpdir(), `scalingo-emu-rootfs-${recipe.id}-`));
  const started = Date.now();
  try {
    onLine(`${recipe.tag}: building from Debian ${suite} packages (${recipe.packages.join(' ')}); the first build downloads them, later ones reuse the package cache`);
    const tar = join(dir, 'rootfs.tar');
    await buildRootfs(recipe, suite, tar, (l) => onLine(`${recipe.tag}: ${l}`));
    onLine(`${recipe.tag}: importing the root filesystem into Docker`);
    await runtime.importImage({ tarPath: tar, tag: recipe.tag, changes: [...recipe.changes, `LABEL ${RECIPE_LABEL}=${hash}`, 'LABEL io.scalingo-emulator.base=debian'] });
    onLine(`${recipe.tag}: built in ${Math.round((Date.now() - started) / 1000)} s`);
    return true;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
