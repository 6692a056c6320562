import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IMAGE_RECIPES, type ImageRecipe, RECIPE_LABEL, recipeHash } from './image-recipes.ts';
import { buildFromRegistry, endsEveryWay, type ImageSource, registryBase } from './registry-images.ts';
import { buildRootfs, debianSuite, removeBuildDir } from './rootfs.ts';
import { type ContainerRuntime } from './runtime.ts';

// Images from recipes, built once and cached by the recipe hash in the image's label (the first source: an
// image the engine has under the emulator's name, from either path); else made from the engine's registry
// (registry-images.ts), then by the Debian path (mmdebstrap), as `images.source` says: `npm run
// images` builds them ahead (with progress), the emulator builds a missing one on first use (a
// deployment's output, an addon's logs and status message, and the terminal show the progress).
// One build per tag at once in a process: a second need of the same image waits for the first
// build and sees its lines. The tag is only set by the final import, so an interrupted build never
// leaves an image that looks current.

/** What a caller sees of a build it needs: when it starts (or is joined) and each progress line. */
export interface BuildHooks {
  onStart?: (recipe: ImageRecipe) => void;
  onLine?: (line: string) => void;
  /** `images.source`: where a missing image comes from (default `auto`: the engine's registry, then Debian's packages). */
  source?: ImageSource;
}

/** Every build of the process, for the terminal's progress line. */
export type ImageBuildEvent =
  | { phase: 'start'; recipe: ImageRecipe }
  | { phase: 'line'; recipe: ImageRecipe; line: string }
  | { phase: 'done'; recipe: ImageRecipe; seconds: number }
  | { phase: 'fail'; recipe: ImageRecipe; error: string };

interface Build {
  done: Promise<void>;
  listeners: Set<(line: string) => void>;
}

const inFlight = new Map<string, Build>();
const watchers = new Set<(e: ImageBuildEvent) => void>();
const ROOTFS_DIR_PREFIX = 'scalingo-emu-rootfs-';

/** Calls `fn` with every recipe build of this process; returns the unsubscribe function. */
export function watchImageBuilds(fn: (e: ImageBuildEvent) => void): () => void {
  watchers.add(fn);
  return () => void watchers.delete(fn);
}

const emit = (e: ImageBuildEvent) => {
  for (const w of watchers) w(e);
};

/** Whether the engine has the image built from this very recipe. */
export async function recipeImageCurrent(runtime: ContainerRuntime, recipe: ImageRecipe): Promise<boolean> {
  const labels = await runtime.imageLabels(recipe.tag);
  return labels?.[RECIPE_LABEL] === recipeHash(recipe, recipe.suite ?? debianSuite());
}

/** Ids of the recipes whose image is missing or out of date on the engine. */
export async function missingRecipeImages(runtime: ContainerRuntime): Promise<string[]> {
  const out: string[] = [];
  for (const r of IMAGE_RECIPES) if (!(await recipeImageCurrent(runtime, r))) out.push(r.id);
  return out;
}

/**
 * Builds the recipe's image unless current, or waits for the build of it already under way.
 * Resolves true when the caller had to wait for a build; a failed build rejects every waiter with
 * the reason, and the next call tries again.
 */
export async function ensureRecipeImage(
  runtime: ContainerRuntime,
  recipe: ImageRecipe,
  hooks: BuildHooks = {},
): Promise<boolean> {
  let running = inFlight.get(recipe.tag);
  if (!running) {
    if (await recipeImageCurrent(runtime, recipe)) return false;
    running = inFlight.get(recipe.tag) ?? startBuild(runtime, recipe, hooks.source ?? 'auto');
  }
  hooks.onStart?.(recipe);
  const onLine = hooks.onLine;
  if (onLine) running.listeners.add(onLine);
  try {
    await running.done;
    return true;
  } finally {
    if (onLine) running.listeners.delete(onLine);
  }
}

function startBuild(runtime: ContainerRuntime, recipe: ImageRecipe, source: ImageSource): Build {
  const listeners = new Set<(line: string) => void>();
  const say = (line: string) => {
    for (const l of listeners) l(line);
    emit({ phase: 'line', recipe, line });
  };
  const started = Date.now();
  emit({ phase: 'start', recipe });
  // Started on the next tick: the caller that made the entry registers its listener first.
  const done = Promise.resolve()
    .then(() => build(runtime, recipe, source, say))
    .then(
      () => emit({ phase: 'done', recipe, seconds: Math.round((Date.now() - started) / 1000) }),
      (err: Error) => {
        const error = `building the ${recipe.title} image (${recipe.tag}) failed: ${err.message}`;
        emit({ phase: 'fail', recipe, error });
        throw new Error(error);
      },
    );
  const entry: Build = { done: done.finally(() => inFlight.delete(recipe.tag)), listeners };
  // Waiters get the rejection; the entry itself must not count as an unhandled one.
  entry.done.catch(() => undefined);
  inFlight.set(recipe.tag, entry);
  return entry;
}

/** The image from the sources `source` allows, in order; when none gives it, an error naming both ways. */
async function build(
  runtime: ContainerRuntime,
  recipe: ImageRecipe,
  source: ImageSource,
  say: (line: string) => void,
): Promise<void> {
  const suite = recipe.suite ?? debianSuite();
  const hash = recipeHash(recipe, suite);
  const started = Date.now();
  const built = () => say(`${recipe.tag} built in ${Math.round((Date.now() - started) / 1000)} s`);
  const official = registryBase(recipe, suite).image;
  let registryFailure = '';
  if (source !== 'debian') {
    try {
      await buildFromRegistry(runtime, recipe, suite, hash, say);
      return built();
    } catch (err) {
      if (endsEveryWay(err)) throw err;
      registryFailure = (err as Error).message;
      if (source === 'registry')
        throw new Error(
          `the engine's registry could not give it (images.source "registry"): ${registryFailure}; ` +
            `the other way is the Debian path (images.source "auto" or "debian", with mmdebstrap and a Debian mirror)`,
        );
      say(`the engine's registry could not give it (${registryFailure}): trying the Debian path`);
    }
  }
  try {
    await buildFromDebian(runtime, recipe, suite, hash, say);
    return built();
  } catch (err) {
    const debianFailure = (err as Error).message;
    throw new Error(
      source === 'debian'
        ? `${debianFailure}; the other way is the engine's registry (images.source "auto" or "registry": the engine pulls ${official})`
        : `${debianFailure}; and the engine's registry, the other way, could not give it either: ${registryFailure} ` +
            '(let the engine reach Docker Hub, or give it a registry mirror)',
    );
  }
}

async function buildFromDebian(
  runtime: ContainerRuntime,
  recipe: ImageRecipe,
  suite: string,
  hash: string,
  say: (line: string) => void,
): Promise<void> {
  removeAbandonedRootfsDirs();
  const dir = mkdtempSync(join(tmpdir(), `${ROOTFS_DIR_PREFIX}${recipe.id}-${process.pid}-`));
  try {
    say(
      `building from Debian ${suite} packages (${recipe.packages.join(' ')}); the first build downloads them, later ones reuse the package cache`,
    );
    const tar = join(dir, 'rootfs.tar');
    await buildRootfs(recipe, suite, tar, say);
    say('importing the root filesystem into Docker');
    const labels = [`LABEL ${RECIPE_LABEL}=${hash}`, 'LABEL io.scalingo-emulator.base=debian'];
    await runtime.importImage({ tarPath: tar, tag: recipe.tag, changes: [...recipe.changes, ...labels] });
  } finally {
    removeBuildDir(dir);
  }
}

/**
 * Build directories left by a process that died during a build (the pid in the name is gone): the
 * unfinished root filesystem and mmdebstrap's temporary chroot with what it had mounted.
 */
function removeAbandonedRootfsDirs(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(/^scalingo-emu-rootfs-[a-z-]+?-(\d+)-/.exec(name)?.[1]);
    if (pid && !processAlive(pid)) removeBuildDir(join(tmpdir(), name));
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
