// Build times of issue #15 (run by hand, once: `npx tsx scripts/bench-stacks.ts`; figures go to BENCHMARKS.md):
// 1. a stack image rebuilt after a recipe change with the .deb cache warm (mmdebstrap + docker import), and the
//    check that finds an image current;
// 2. the Node sample app built by the buildpack-like build, cold (empty build cache) then after a code change
//    (cache warm), against a plain `docker build` of the same app on the same stack image (package*.json copied
//    first, `npm ci --offline` from the same prefetched npm cache), cold (--no-cache) then after the same change.

import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { resolvePackageManager } from '../src/modules/deployments/package-manager.ts';
import { prefetchPackages } from '../src/modules/deployments/package-prefetch.ts';
import { buildpackBuild } from '../src/modules/deployments/slug-build.ts';
import { createDockerRuntime } from '../src/runtime/docker-runtime.ts';
import { findRecipe } from '../src/runtime/image-recipes.ts';
import { ensureRecipeImage } from '../src/runtime/recipe-images.ts';

const runtime = createDockerRuntime();
const scratch = mkdtempSync(join(tmpdir(), 'bench-stacks-'));
const rows: string[] = [];
const time = async (label: string, fn: () => Promise<unknown>) => {
  const t = Date.now();
  await fn();
  const s = (Date.now() - t) / 1000;
  rows.push(`| ${label} | ${s.toFixed(1)} s |`);
  console.log(`${label}: ${s.toFixed(1)} s`);
};
const load0 = loadavg()
  .map((x) => x.toFixed(2))
  .join(' / ');
try {
  const node = findRecipe('node');
  if (!node) throw new Error('no node recipe');
  await time('stack-node: image current, nothing to build (hash check)', () => ensureRecipeImage(runtime, node));
  const variant = { ...node, tag: 'scalingo-emulator/bench-stack-node:1', customize: [...node.customize, 'true'] };
  await time('stack-node: recipe changed, .deb cache warm (mmdebstrap + docker import)', () =>
    ensureRecipeImage(runtime, variant, { onLine: (l) => console.log(l) }),
  );
  await runtime.removeImage(variant.tag);

  const app = join(scratch, 'app');
  cpSync(resolve(import.meta.dirname, '../fixtures/apps/node-pg-redis'), app, { recursive: true });
  const cache = join(scratch, 'cache');
  const build = (tag: string) =>
    buildpackBuild(
      {
        runtime,
        instanceId: 'bench',
        appId: 'bench',
        deploymentId: `b${Date.now()}`,
        context: app,
        cacheDir: cache,
        tag,
        labels: { 'io.scalingo-emulator.bench': '1' },
        procfile: null,
        say: () => undefined,
      },
      'node',
    );
  await time('Node app, buildpack-like build, empty build cache (npm packages fetched from the registry)', () =>
    build('scalingo-emulator/bench-app:1'),
  );
  writeFileSync(
    join(app, 'server.js'),
    `${'// changed\n'}${execFileSync('cat', [join(app, 'server.js')], { encoding: 'utf8' })}`,
  );
  await time('Node app, buildpack-like build after a code change (build cache warm)', () =>
    build('scalingo-emulator/bench-app:2'),
  );

  // The same app with a plain Dockerfile on the same stack image, npm packages from the same prefetched cache.
  const ctx = join(scratch, 'ctx');
  cpSync(app, ctx, { recursive: true });
  const npmCache = join(scratch, 'docker-npm');
  await prefetchPackages(await resolvePackageManager(ctx), ctx, npmCache, () => undefined);
  cpSync(join(npmCache, 'npm'), join(ctx, '.npm-cache'), { recursive: true });
  writeFileSync(
    join(ctx, 'Dockerfile'),
    `FROM ${node.tag}\nWORKDIR /app\nCOPY package.json package-lock.json ./\nCOPY .npm-cache /tmp/npm-cache\nRUN npm ci --offline --cache /tmp/npm-cache --no-audit --no-fund\nCOPY . .\nCMD ["npm", "start"]\n`,
  );
  const dockerBuild = (tag: string, ...extra: string[]) =>
    execFileSync('docker', ['build', '-q', '--network', 'none', ...extra, '-t', tag, ctx], { stdio: 'ignore' });
  await time('same app, plain `docker build` (--no-cache)', async () =>
    dockerBuild('scalingo-emulator/bench-docker:1', '--no-cache'),
  );
  writeFileSync(
    join(ctx, 'server.js'),
    `// changed again\n${execFileSync('cat', [join(ctx, 'server.js')], { encoding: 'utf8' })}`,
  );
  await time('same app, plain `docker build` after a code change (layer cache)', async () =>
    dockerBuild('scalingo-emulator/bench-docker:2'),
  );
  for (const t of [
    'scalingo-emulator/bench-app:1',
    'scalingo-emulator/bench-app:2',
    'scalingo-emulator/bench-docker:1',
    'scalingo-emulator/bench-docker:2',
  ])
    await runtime.removeImage(t);
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await runtime.close();
}
const section = [
  '',
  `## ${new Date().toISOString().replace('T', ' ').slice(0, 19)} UTC — stack images and Node app builds (scripts/bench-stacks.ts)`,
  '',
  `- Machine: ${cpus().length} cores, shared with other developers' test runs; load average at start ${load0}, at end ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ')}`,
  '- One run each (builds take minutes; no rounds): read the figures as orders of magnitude.',
  '',
  '| build | time |',
  '| --- | --- |',
  ...rows,
  '',
];
if (process.argv.includes('--write'))
  appendFileSync(resolve(import.meta.dirname, '../BENCHMARKS.md'), section.join('\n'));
console.log(section.join('\n'));
