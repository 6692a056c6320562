import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type ContainerRuntime } from '../../src/runtime/runtime.ts';

/**
 * The image a plain `docker build` of a Node.js app starts from, to compare with the emulator's build:
 * the Node.js stack with the Node.js the app gets (issue 34: the stack itself has none), made by the
 * emulator tree in `treeDir` the way its builds make it; a tree from before issue 34, its Node.js stack.
 */
export async function nodeBaseImage(treeDir: string, runtime: ContainerRuntime, appDir: string): Promise<string> {
  const src = (p: string) => pathToFileURL(join(treeDir, 'src', p)).href;
  const { stackRecipe, recipeHash } = (await import(
    src('runtime/image-recipes.ts')
  )) as typeof import('../../src/runtime/image-recipes.ts');
  const stack = stackRecipe('node');
  if (!stack) throw new Error('no node stack recipe');
  if (!existsSync(join(treeDir, 'src/modules/deployments/node-runtime.ts'))) return stack.tag;
  const { nodeRuntimeImage } = (await import(
    src('modules/deployments/node-runtime.ts')
  )) as typeof import('../../src/modules/deployments/node-runtime.ts');
  const { ensureRecipeImage } = (await import(
    src('runtime/recipe-images.ts')
  )) as typeof import('../../src/runtime/recipe-images.ts');
  const { debianSuite } = (await import(src('runtime/rootfs.ts'))) as typeof import('../../src/runtime/rootfs.ts');
  await ensureRecipeImage(runtime, stack);
  const stackHash = recipeHash(stack, stack.suite ?? debianSuite());
  return (
    await nodeRuntimeImage({ runtime, instanceId: 'bench', stack, stackHash, context: appDir, say: () => undefined })
  ).tag;
}
