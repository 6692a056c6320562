// Builds the images the emulator and its tests run: the busybox stack image (FROM scratch + the host's static
// busybox, else busybox:stable-musl's), then the language stacks and addon servers from the sources
// EMULATOR_IMAGES_SOURCE allows (auto: the engine's registry, else mmdebstrap from the machine's Debian mirror
// configuration + docker import; registry; debian). Each is rebuilt only when its
// recipe changes. `npm run images` builds all; `npm run images -- node postgresql` only those (and the
// busybox base, which is always checked); `npm run images -- busybox` the base alone. The emulator builds
// a missing one on first use as well: building ahead only saves that wait. Stacks of another Debian suite (the
// runtime versions apps ask for: `npm run images -- node-trixie`) are built only when named.
import { DEFAULT_STACK_IMAGE } from '../src/config/schema.ts';
import { createDockerRuntime } from '../src/runtime/docker-runtime.ts';
import { findRecipe, IMAGE_RECIPES } from '../src/runtime/image-recipes.ts';
import { ensureRecipeImage } from '../src/runtime/recipe-images.ts';
import { type ImageSource } from '../src/runtime/registry-images.ts';

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((w) => w !== 'busybox' && !findRecipe(w));
if (unknown.length) {
  console.error(
    `unknown image(s): ${unknown.join(', ')} (known: busybox, ${IMAGE_RECIPES.map((r) => r.id).join(', ')})`,
  );
  process.exit(2);
}

const source = (process.env.EMULATOR_IMAGES_SOURCE || 'auto') as ImageSource;
if (!['auto', 'registry', 'debian'].includes(source)) {
  console.error(`EMULATOR_IMAGES_SOURCE: "${source}" is none of auto, registry, debian`);
  process.exit(2);
}

// The engine the emulator would use (configuration aside): DOCKER_HOST, the docker context, Docker Desktop's socket…
const runtime = createDockerRuntime();
if (!wanted.length || wanted.includes('busybox')) {
  await runtime.ensureBaseImage(DEFAULT_STACK_IMAGE);
  console.log(`${DEFAULT_STACK_IMAGE}: ready`);
}
const named = wanted.filter((w) => w !== 'busybox');
const recipes = named.length
  ? named.map((id) => findRecipe(id)).filter((r) => r !== undefined)
  : wanted.length
    ? []
    : IMAGE_RECIPES;
for (const recipe of recipes) {
  const started = Date.now();
  const onLine = (line: string) =>
    console.log(`[${Math.round((Date.now() - started) / 1000)}s] ${recipe.tag}: ${line}`);
  const built = await ensureRecipeImage(runtime, recipe, { onLine, source });
  console.log(`${recipe.tag}: ${built ? `built in ${Math.round((Date.now() - started) / 1000)} s` : 'up to date'}`);
}
await runtime.close();
