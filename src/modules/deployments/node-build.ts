import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheDirectories, type NodeScripts, nodeScripts } from './node-lifecycle.ts';
import { resolvePackageManager } from './package-manager.ts';
import { prefetchPackages } from './package-prefetch.ts';

// A Node.js build's plan: the package manager (package-manager.ts), the packages the host downloads
// for it (package-prefetch.ts), and the lifecycle's scripts (node-lifecycle.ts), cut in a dependency
// step and a code step when the install does not need the code: no `scalingo-prebuild` (it runs
// before the install, over the code), no node_modules in the code, no workspaces (their packages are
// code). Otherwise the whole lifecycle runs over the code in one step, without a reusable layer.

/** What the dependency step reads besides package.json and the lockfile (managers' settings, vendored releases, patches). */
const MANAGER_FILES = [
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.yarn/releases',
  '.yarn/plugins',
  '.yarn/patches',
  '.yarn/cache',
  '.pnp.cjs',
  '.pnp.loader.mjs',
  '.pnpmfile.cjs',
  'pnpm-workspace.yaml',
  'patches',
];

export interface NodeBuildSteps extends NodeScripts {
  /** The files the dependency step gets (null: no dependency step). */
  inputs: string[] | null;
  extra: Record<string, string>;
  /** false when NODE_MODULES_CACHE=false: the dependency layer is built again. */
  reuse: boolean;
}

export async function planNodeBuild(
  context: string,
  cacheDir: string,
  env: Record<string, string>,
  say: (line: string) => void,
  o: { signal?: AbortSignal; node?: string } = {},
): Promise<NodeBuildSteps> {
  const plan = await resolvePackageManager(context, o.node);
  for (const l of plan.lines) say(`       ${l}`);
  let checkedInModules = existsSync(join(context, 'node_modules'));
  if (checkedInModules) {
    say(' !     node_modules checked into source control: https://doc.scalingo.com/languages/nodejs/start');
    if (plan.name !== 'npm') {
      // As the buildpack does for Yarn: the checked-in modules are removed and installed from the lockfile.
      await rm(join(context, 'node_modules'), { recursive: true, force: true });
      checkedInModules = false;
    }
  }
  const workspaces = plan.pkg.workspaces || existsSync(join(context, 'pnpm-workspace.yaml'));
  const split = plan.pkg.scripts['scalingo-prebuild'] === undefined && !checkedInModules && !workspaces;
  const { extra, tool } = await prefetchPackages(plan, context, cacheDir, say, env, o.signal);
  const { kept, refused } = cacheDirectories(plan.pkg.cacheDirectories);
  for (const d of refused) say(` !     cacheDirectories: "${d}" is not a relative path inside the app: not cached`);
  const dirs = kept.filter((d) => d.split('/')[0] !== 'node_modules');
  if (dirs.length < kept.length)
    say(
      '       cacheDirectories: node_modules is kept by the dependency layer (reused while the dependency files are unchanged)',
    );
  const scripts = nodeScripts({ plan, tool, checkedInModules }, split, dirs);
  const reuse = env.NODE_MODULES_CACHE !== 'false';
  if (!reuse)
    say('       Caching has been disabled because NODE_MODULES_CACHE=false: the dependency layer is built again');
  const inputs = split
    ? [
        'package.json',
        ...(plan.lockfile ? [plan.lockfile] : []),
        ...MANAGER_FILES,
        ...(plan.vendored ? [plan.vendored] : []),
      ]
        .filter((f, i, all) => all.indexOf(f) === i)
        .filter((f) => existsSync(join(context, f)))
    : null;
  return { ...scripts, inputs, extra, reuse };
}
