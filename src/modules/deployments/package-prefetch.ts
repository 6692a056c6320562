import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { hostRegistry, type NpmOptions, type NpmRun, runNodeScript, runNpm } from './host-npm.ts';
import { npmLockOnRegistry, yarnLockOnRegistry } from './lockfile-registry.ts';
import { type ToolInContainer } from './node-lifecycle.ts';
import { type PackageManagerPlan } from './package-manager.ts';
import { fetchPackage } from './registry-packages.ts';

// Build containers have no network by default (only loopback; `builds.network`): the npm registry is
// reachable from the emulator's host. So before a Node build, the host downloads what the app's lockfile names into the app's
// build cache, each manager with its own cache (npm: /cache/npm, Yarn 1: /cache/yarn, Yarn 2+:
// /cache/yarn-berry, pnpm: its store /cache/pnpm-store), without running any script of the app or its
// dependencies; the build container then installs from there, offline, with the same manager and
// version (install scripts and native builds run in the container). The host's npm configuration
// decides the registry: a lockfile naming another registry host is read with its URLs moved to it.
// Without a lockfile, npm resolves one on the host (`--package-lock-only`) and the build uses it.

export interface Prefetched {
  /** Files added to the dependency inputs (the package-lock.json npm resolved on the host). */
  extra: Record<string, string>;
  /** The manager's release, copied into the build cache for the container. */
  tool: ToolInContainer | null;
}

type Say = (line: string) => void;

/** Files of the app a manager reads to fetch (besides package.json and the lockfile). */
const CONFIG_FILES = ['.npmrc', '.yarnrc.yml', 'pnpm-workspace.yaml', '.pnpmfile.cjs'];

/**
 * The app's variables an `.npmrc` of the app names (`${NPM_TOKEN}`): npm refuses a config naming a variable
 * it does not have, and the platform's build has the app's environment.
 */
function npmrcVariables(context: string, env: Record<string, string>): Record<string, string> {
  const file = join(context, '.npmrc');
  if (!existsSync(file)) return {};
  const named = new Set(
    [
      ...readFileSync(file, 'utf8')
        .slice(0, 65536)
        .matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g),
    ].map((m) => m[1]),
  );
  return Object.fromEntries(Object.entries(env).filter(([k]) => named.has(k)));
}

export async function prefetchPackages(
  plan: PackageManagerPlan,
  context: string,
  cacheDir: string,
  say: Say,
  env: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Prefetched> {
  mkdirSync(cacheDir, { recursive: true });
  const tool = plan.tool ? await toolInCache(plan.tool, cacheDir) : null;
  const generated = join(cacheDir, 'resolved-package-lock.json');
  const extra = (): Record<string, string> =>
    plan.name === 'npm' && !plan.lockfile && existsSync(generated)
      ? { 'package-lock.json': readFileSync(generated, 'utf8') }
      : {};
  // Nothing to download: no lockfile (its packages may be a workspace's members') and no dependency declared.
  if (!plan.lockfile && !plan.pkg.hasDependencies && !plan.pkg.workspaces) return { extra: {}, tool };
  const registry = await hostRegistry();
  const key = prefetchKey(plan, context, registry);
  const keyFile = join(cacheDir, 'prefetch.key');
  if (existsSync(keyFile) && readFileSync(keyFile, 'utf8') === key) {
    say(`-----> Packages already in the build cache (package.json and ${plan.lockfile ?? 'the lockfile'} unchanged)`);
    return { extra: extra(), tool };
  }
  const work = mkdtempSync(join(tmpdir(), 'scalingo-emu-prefetch-'));
  try {
    cpSync(join(context, 'package.json'), join(work, 'package.json'));
    // A workspace's managers read each member's package.json (its own dependencies, the links).
    if (plan.pkg.workspaces || existsSync(join(context, 'pnpm-workspace.yaml')))
      for (const member of memberManifests(context)) {
        mkdirSync(dirname(join(work, member)), { recursive: true });
        cpSync(join(context, member), join(work, member));
      }
    for (const f of CONFIG_FILES) if (existsSync(join(context, f))) cpSync(join(context, f), join(work, f));
    if (plan.vendored) {
      mkdirSync(dirname(join(work, plan.vendored)), { recursive: true });
      cpSync(join(context, plan.vendored), join(work, plan.vendored));
    }
    if (plan.lockfile) copyLockfile(plan, context, work, registry);
    say(
      `-----> Downloading the packages ${plan.lockfile ? `of ${plan.lockfile}` : 'of package.json'} through ${registry} ` +
        '(on the emulator host, no script run; the build container is offline)',
    );
    const lines: string[] = [];
    const onLine = (l: string) => (lines.push(l), say(`       ${l}`));
    const run = await fetchWith(
      plan,
      work,
      cacheDir,
      tool,
      registry,
      { cwd: work, onLine, env: npmrcVariables(context, env), signal },
      generated,
    );
    if (run.code !== 0)
      throw new Error(
        `${plan.name === 'yarn' && plan.berry ? 'Yarn' : plan.name} could not download the packages through ${registry} ` +
          `(on the emulator host): ${lastWords(lines)}`,
      );
    writeFileSync(keyFile, key);
    return { extra: extra(), tool };
  } finally {
    // Not rmSync: the scratch node_modules of a large app takes seconds to remove, which would stop the event loop.
    await rm(work, { recursive: true, force: true });
  }
}

/** The package.json files below the app's root (workspace members), node_modules and dot-folders left out; bounded. */
function memberManifests(context: string): string[] {
  const found: string[] = [];
  let visited = 0;
  const walk = (rel: string, depth: number) => {
    if (depth > 4 || visited > 5000) return;
    for (const e of readdirSync(join(context, rel), { withFileTypes: true })) {
      visited++;
      if (!e.isDirectory() || e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const sub = join(rel, e.name);
      if (existsSync(join(context, sub, 'package.json'))) found.push(join(sub, 'package.json'));
      walk(sub, depth + 1);
    }
  };
  walk('', 0);
  return found.slice(0, 500);
}

function copyLockfile(plan: PackageManagerPlan, context: string, work: string, registry: string): void {
  const lockfile = plan.lockfile ?? '';
  const text = readFileSync(join(context, lockfile), 'utf8');
  const moved =
    plan.name === 'npm'
      ? npmLockOnRegistry(text, registry)
      : plan.name === 'yarn' && !plan.berry
        ? yarnLockOnRegistry(text, registry)
        : text;
  writeFileSync(join(work, lockfile), moved);
}

async function fetchWith(
  plan: PackageManagerPlan,
  work: string,
  cacheDir: string,
  tool: ToolInContainer | null,
  registry: string,
  o: NpmOptions,
  generated: string,
): Promise<NpmRun> {
  if (plan.name === 'npm') {
    const cache = join(cacheDir, 'npm');
    if (!plan.lockfile) {
      const resolved = await runNpm(
        [
          'install',
          '--package-lock-only',
          '--ignore-scripts',
          `--registry=${registry}`,
          '--cache',
          cache,
          '--no-audit',
          '--no-fund',
        ],
        o,
      );
      if (resolved.code !== 0) return resolved;
      cpSync(join(work, 'package-lock.json'), generated);
    }
    const args = ['ci', '--ignore-scripts', '--include=dev', `--registry=${registry}`, '--cache', cache];
    return runNpm([...args, '--no-audit', '--no-fund'], o);
  }
  const entry = plan.vendored
    ? join(work, plan.vendored)
    : tool
      ? join(cacheDir, tool.from.slice('/cache/'.length), tool.bin)
      : '';
  if (plan.name === 'pnpm')
    return runNodeScript(
      entry,
      ['fetch', '--store-dir', join(cacheDir, 'pnpm-store'), `--registry=${registry}`, '--reporter=append-only'],
      o,
    );
  if (!plan.berry)
    return runNodeScript(
      entry,
      [
        'install',
        '--frozen-lockfile',
        '--ignore-scripts',
        '--ignore-engines',
        '--non-interactive',
        '--no-progress',
        '--production=false',
        '--cache-folder',
        join(cacheDir, 'yarn'),
      ],
      o,
    );
  return runNodeScript(entry, ['install', '--immutable', '--mode=skip-build'], {
    ...o,
    env: {
      ...o.env,
      YARN_CACHE_FOLDER: join(cacheDir, 'yarn-berry'),
      YARN_ENABLE_GLOBAL_CACHE: '0',
      YARN_ENABLE_TELEMETRY: '0',
      YARN_ENABLE_PROGRESS_BARS: '0',
      YARN_NPM_REGISTRY_SERVER: registry.replace(/\/$/, ''),
      YARN_IGNORE_PATH: '1',
      YARN_GLOBAL_FOLDER: join(work, '.yarn-global'),
    },
  });
}

/** The manager's release (fetched once in the user's cache) copied into the app's build cache, seen as /cache/tools/…. */
async function toolInCache(t: { pkg: string; version: string }, cacheDir: string): Promise<ToolInContainer> {
  const name = `${t.pkg.replace('/', '+')}@${t.version}`;
  const dest = join(cacheDir, 'tools', name);
  if (!existsSync(join(dest, 'package.json'))) {
    const source = await fetchPackage(t.pkg, t.version);
    const stage = `${dest}.${process.pid}.tmp`;
    await rm(stage, { recursive: true, force: true });
    await cp(source, stage, { recursive: true });
    await rm(dest, { recursive: true, force: true });
    renameSync(stage, dest);
  }
  return { from: `/cache/tools/${name}`, bin: binOf(dest, t.pkg) };
}

/** The entry point the package declares for its command (`bin`), e.g. `bin/yarn.js`, `bin/pnpm.cjs`. */
function binOf(dir: string, pkg: string): string {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { bin?: unknown };
  const command = pkg === 'pnpm' ? 'pnpm' : 'yarn';
  const bin =
    typeof manifest.bin === 'string'
      ? manifest.bin
      : manifest.bin && typeof manifest.bin === 'object'
        ? (manifest.bin as Record<string, unknown>)[command]
        : undefined;
  if (typeof bin !== 'string' || bin.includes('..')) throw new Error(`${pkg} declares no \`${command}\` command`);
  return bin.replace(/^\.\//, '');
}

function prefetchKey(plan: PackageManagerPlan, context: string, registry: string): string {
  const h = createHash('sha256').update(JSON.stringify({ v: 2, name: plan.name, tool: plan.tool, registry }));
  for (const f of ['package.json', plan.lockfile ?? '', ...CONFIG_FILES, plan.vendored ?? ''])
    if (f && existsSync(join(context, f))) h.update(`\0${f}\0`).update(readFileSync(join(context, f)));
  return h.digest('hex').slice(0, 16);
}

/** What the manager said went wrong: its first error lines, without its log-file and advice lines. */
const NOISE =
  /complete log of this run|Note that you can also install|tarball, folder, http url|^\S+ error 404\s*$|^npm (error|ERR!) code /i;
const lastWords = (lines: string[]) =>
  lines
    .filter((l) => /ERR!|error|404|not found|YN0\d+|ERR_PNPM/i.test(l) && !NOISE.test(l))
    .map((l) => l.replace(/^(npm (error|ERR!)|error|➤)\s+/i, '').trim())
    .filter((l, i, all) => l && all.indexOf(l) === i)
    .slice(0, 3)
    .join(' ')
    .slice(0, 600) || 'no answer from the registry';
