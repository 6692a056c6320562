// What the database consoles' clients cost the stack images (issue #22; run by hand, once:
// `npx tsx scripts/bench-stack-clients.ts [node python ruby]`, figures go to BENCHMARKS.md). For each stack, the
// recipe without the clients (as before issue #22) and the current one are built under scratch tags, one after
// the other, with the same warm .deb cache, so both pay the same mmdebstrap + docker import; then their sizes are
// read and the scratch images removed.

import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { DATABASE_CLIENT_PACKAGES, dbclientFetcherInstall } from '../src/runtime/dbclient-fetcher.ts';
import { createDockerRuntime } from '../src/runtime/docker-runtime.ts';
import { findRecipe, type ImageRecipe } from '../src/runtime/image-recipes.ts';
import { ensureRecipeImage } from '../src/runtime/recipe-images.ts';

const runtime = createDockerRuntime();
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');
const sizeMb = (tag: string) =>
  Math.round(Number(execFileSync('docker', ['image', 'inspect', '-f', '{{.Size}}', tag], { encoding: 'utf8' })) / 1e6);

async function timedBuild(recipe: ImageRecipe): Promise<{ seconds: number; mb: number }> {
  const t = Date.now();
  await ensureRecipeImage(runtime, recipe);
  const seconds = Math.round((Date.now() - t) / 1000);
  const mb = sizeMb(recipe.tag);
  await runtime.removeImage(recipe.tag);
  return { seconds, mb };
}

const rows: string[] = [];
console.log(`load average at start: ${load()}`);
for (const id of process.argv.slice(2).length ? process.argv.slice(2) : ['node', 'python', 'ruby']) {
  const current = findRecipe(id);
  if (!current) throw new Error(`no ${id} recipe`);
  const install = dbclientFetcherInstall();
  const without: ImageRecipe = {
    ...current,
    tag: `scalingo-emulator/bench-clients-${id}-without:1`,
    packages: current.packages.filter((p) => !DATABASE_CLIENT_PACKAGES.includes(p)),
    customize: current.customize.filter((c) => !install.includes(c)),
  };
  const withClients: ImageRecipe = { ...current, tag: `scalingo-emulator/bench-clients-${id}-with:1` };
  const a = await timedBuild(without);
  const b = await timedBuild(withClients);
  const row = `| stack-${id} | ${a.mb} MB | ${b.mb} MB | +${b.mb - a.mb} MB | ${a.seconds} s | ${b.seconds} s |`;
  console.log(row);
  rows.push(row);
}
console.log(`load average at end: ${load()}`);
console.log(
  [
    '| image | without clients | with clients | size cost | build without | build with |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n'),
);
await runtime.close();
