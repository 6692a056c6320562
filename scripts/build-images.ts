// Builds the images the emulator and its tests run, offline: the busybox stack image (FROM scratch
// + the host's static busybox), then the Debian-based language stacks and addon servers (mmdebstrap
// from the machine's Debian mirror configuration + docker import). Each is rebuilt only when its
// recipe changes. `npm run images` builds all; `npm run images -- node postgresql` only those (and the
// busybox base, which is always checked); `npm run images -- busybox` the base alone. The emulator builds
// a missing one on first use as well: building ahead only saves that wait. Stacks of another Debian suite (the
// runtime versions apps ask for: `npm run images -- node-trixie`) are built only when named.
import Docker from 'dockerode';
import { ensureBusyboxImage } from '../src/runtime/images.ts';
import { DEFAULT_STACK_IMAGE } from '../src/config/schema.ts';
import { createDockerRuntime } from '../src/runtime/docker-runtime.ts';
import { IMAGE_RECIPES, findRecipe } from '../src/runtime/image-recipes.ts';
import { ensureRecipeImage } from '../src/runtime/recipe-images.ts';

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((w) => w !== 'busybox' && !findRecipe(w));
if (unknown.length) {
  console.error(
    `unknown image(s): ${unknown.join(', ')} (known: busybox, ${IMAGE_RECIPES.map((r) => r.id).join(', ')})`,
  );
  process.exit(2);
}

const docker = new Docker();
if (!wanted.length || wanted.includes('busybox')) {
  const built = await ensureBusyboxImage(docker, DEFAULT_STACK_IMAGE);
  console.log(`${DEFAULT_STACK_IMAGE}: ${built ? 'built' : 'already present'}`);
}
const runtime = createDockerRuntime();
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
  const built = await ensureRecipeImage(runtime, recipe, { onLine });
  console.log(`${recipe.tag}: ${built ? `built in ${Math.round((Date.now() - started) / 1000)} s` : 'up to date'}`);
}
await runtime.close();
