import { BUILD_ENV_FILE } from './build-container.ts';
import { type PackageManagerPlan } from './package-manager.ts';

// The Node.js build's lifecycle as the platform's buildpack runs it (Scalingo/nodejs-buildpack:
// bin/compile, lib/dependencies.sh, lib/cache.sh): `scalingo-prebuild`, the install with the
// devDependencies, `scalingo-postbuild` if present else `build` (with NODE_BUILD_FLAGS), the
// devDependencies pruned (unless NODE_ENV is not production, NPM_CONFIG_PRODUCTION / YARN_PRODUCTION
// is set, YARN2_SKIP_PRUNING / PNPM_SKIP_PRUNING is true), then `scalingo-cleanup`; with the same
// headers. The scripts run offline: the packages come from the caches the host filled (/cache).
//
// The build is cut in two steps where it can be (node-build.ts decides): the dependency step
// (the manager, then the install; the prune too when no build script needs the devDependencies)
// makes the app's reusable dependency layer, the code step runs the rest over the code.

/** Where a manager's release is put in the app (as the buildpack's .scalingo/yarn) and its command. */
export interface ToolInContainer {
  /** The release's files, under /cache (copied from the host's registry cache). */
  from: string;
  /** Its entry point, relative to the release's folder. */
  bin: string;
}

export interface LifecycleParts {
  plan: PackageManagerPlan;
  tool: ToolInContainer | null;
  /** node_modules is part of the code (npm rebuilds it, then installs what is missing). */
  checkedInModules: boolean;
}

const PRELUDE = String.raw`set -e
cd /app
if [ -f /cache/${BUILD_ENV_FILE} ]; then set -a; . /cache/${BUILD_ENV_FILE}; set +a; fi
export NODE_ENV="${'$'}{NODE_ENV:-production}" NPM_CONFIG_LOGLEVEL="${'$'}{NPM_CONFIG_LOGLEVEL:-error}"
export npm_config_cache=/cache/npm npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
export XDG_CACHE_HOME=/tmp/.cache XDG_STATE_HOME=/tmp/.state XDG_DATA_HOME=/tmp/.data XDG_CONFIG_HOME=/tmp/.config
export npm_config_store_dir=/cache/pnpm-store pnpm_config_store_dir=/cache/pnpm-store npm_config_offline=true pnpm_config_offline=true
`;

/** Settings of the manager itself (Yarn 2+ refuses settings it does not know, Yarn 1's among them). */
function managerEnv(plan: PackageManagerPlan): string {
  if (plan.name !== 'yarn') return '';
  if (!plan.berry) return 'export YARN_DISABLE_SELF_UPDATE_CHECK=true';
  return 'export YARN_ENABLE_TELEMETRY=0 YARN_ENABLE_GLOBAL_CACHE=0 YARN_GLOBAL_FOLDER=/tmp/.yarn-global YARN_ENABLE_NETWORK=0';
}

const say = (line: string) => `echo ${JSON.stringify(line)}`;
const header = (title: string) => `echo "-----> ${title}"`;

/** `npm run`, `yarn run`, `pnpm run` of a script of package.json, as lib/dependencies.sh runs it. */
function runScript(plan: PackageManagerPlan, name: string, buildFlags = false): string {
  const flags = buildFlags ? ` ${plan.name === 'yarn' ? '' : '-- '}"$NODE_BUILD_FLAGS"` : '';
  const run =
    plan.name === 'yarn'
      ? `yarn${plan.berry ? '' : ' --offline'} run ${name}`
      : plan.name === 'pnpm'
        ? `pnpm run --if-present ${name}`
        : `npm run ${name} --if-present`;
  const line = say(`       Running ${name}${plan.name === 'yarn' ? ' (yarn)' : ''}`);
  if (!buildFlags) return `${line}\n${run}`;
  return `${line}\nif [ -n "$NODE_BUILD_FLAGS" ]; then echo "       Running with $NODE_BUILD_FLAGS flags"; ${run}${flags}; else ${run}; fi`;
}

/** The manager's release in /app/.scalingo/<manager> and its command in /usr/local/bin (it stays in the image). */
function setupTool(p: LifecycleParts): string {
  const { plan, tool } = p;
  if (plan.vendored)
    return `printf '#!/bin/sh\\nexec node /app/%s "$@"\\n' ${JSON.stringify(plan.vendored)} > /usr/local/bin/yarn && chmod 755 /usr/local/bin/yarn`;
  if (!tool) return '';
  const dir = `/app/.scalingo/${plan.name}`;
  return [
    `rm -rf ${dir} && mkdir -p /app/.scalingo && cp -a ${tool.from} ${dir}`,
    `printf '#!/bin/sh\\nexec node ${dir}/${tool.bin} "$@"\\n' > /usr/local/bin/${plan.name}`,
    `chmod 755 /usr/local/bin/${plan.name}`,
  ].join('\n');
}

const NPM_DEV = 'if [ "$NPM_CONFIG_PRODUCTION" = true ]; then dev=--omit=dev; else dev=--include=dev; fi';
const BERRY_CACHE = (pnp: boolean) =>
  pnp
    ? 'mkdir -p .yarn/cache && for f in /cache/yarn-berry/*; do [ -e "$f" ] && cp -n "$f" .yarn/cache/; done; export YARN_CACHE_FOLDER=/app/.yarn/cache'
    : 'export YARN_CACHE_FOLDER=/cache/yarn-berry';

function install(p: LifecycleParts): string {
  const { plan } = p;
  const lines = [header('Installing dependencies')];
  if (plan.name === 'yarn' && plan.berry)
    lines.push(BERRY_CACHE(plan.pnp), say("       Running 'yarn install' with yarn.lock"), 'yarn install --immutable');
  else if (plan.name === 'yarn')
    lines.push(
      say('       Installing node modules (yarn.lock)'),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, not a template
      'yarn install --production="${YARN_PRODUCTION:-false}" --frozen-lockfile --ignore-engines --offline --non-interactive --cache-folder /cache/yarn',
    );
  else if (plan.name === 'pnpm')
    lines.push(say("       Running 'pnpm install' with pnpm-lock.yaml"), 'pnpm install --prod=false --frozen-lockfile');
  else if (p.checkedInModules)
    lines.push(
      NPM_DEV,
      say('       Prebuild detected (node_modules already exists)'),
      say('       Rebuilding any native modules'),
      'npm rebuild --offline',
      say('       Installing any new modules (package.json)'),
      'npm install $dev --offline --no-audit --no-fund',
    );
  else
    lines.push(
      NPM_DEV,
      'if [ -f package-lock.json ] || [ -f npm-shrinkwrap.json ]; then',
      `  ${say('       Installing node modules')}; npm ci $dev --offline --no-audit --no-fund`,
      'else',
      `  ${say('       Installing node modules (package.json)')}; npm install $dev --offline --no-audit --no-fund`,
      'fi',
    );
  return lines.join('\n');
}

/** lib/dependencies.sh's *_prune_devdependencies, their reasons to skip included. */
function prune(plan: PackageManagerPlan): string {
  const skip = (why: string) => `echo "       Skipping because ${why}"`;
  const common = [
    header('Pruning devDependencies'),
    `if [ "$NODE_ENV" = test ]; then ${skip("NODE_ENV is 'test'")}`,
    `elif [ "$NODE_ENV" != production ]; then ${skip("NODE_ENV is not 'production'")}`,
  ];
  if (plan.name === 'npm')
    return [
      ...common,
      `elif [ -n "$NPM_CONFIG_PRODUCTION" ]; then ${skip("NPM_CONFIG_PRODUCTION is '$NPM_CONFIG_PRODUCTION'")}`,
      'else npm prune --omit=dev --offline --no-audit --no-fund; fi',
    ].join('\n');
  if (plan.name === 'pnpm')
    return [
      ...common,
      `elif [ "$PNPM_SKIP_PRUNING" = true ]; then ${skip("PNPM_SKIP_PRUNING is '$PNPM_SKIP_PRUNING'")}`,
      'else pnpm prune --prod --ignore-scripts; fi',
    ].join('\n');
  const yarnSkip = `elif [ -n "$YARN_PRODUCTION" ]; then ${skip("YARN_PRODUCTION is '$YARN_PRODUCTION'")}`;
  if (!plan.berry)
    return [
      ...common,
      yarnSkip,
      'else yarn install --frozen-lockfile --ignore-engines --ignore-scripts --offline --non-interactive --cache-folder /cache/yarn; fi',
    ].join('\n');
  // The buildpack runs its own Yarn plugin (`yarn heroku prune`); Yarn 4's built-in `workspaces focus` does the same.
  return [
    ...common,
    yarnSkip,
    `elif [ "$YARN2_SKIP_PRUNING" = true ]; then ${skip("YARN2_SKIP_PRUNING is '$YARN2_SKIP_PRUNING'")}`,
    `elif ! yarn workspaces focus --help >/dev/null 2>&1; then ${skip('this Yarn has no `workspaces focus` (Yarn 4 has it built in)')}`,
    `else ${BERRY_CACHE(plan.pnp)}; echo "       Running 'yarn workspaces focus --all --production'"; yarn workspaces focus --all --production`,
    plan.pnp ? '' : '  echo "       Removing local yarn cache to reduce slug size"; rm -rf /app/.yarn/cache',
    'fi',
  ].join('\n');
}

/** Safe cacheDirectories entries (relative, no `..`, plain characters): others are left out with a line. */
export function cacheDirectories(dirs: string[]): { kept: string[]; refused: string[] } {
  const kept: string[] = [];
  const refused: string[] = [];
  for (const d of dirs) {
    const clean = d.replace(/^\.\//, '').replace(/\/+$/, '');
    const ok = /^[A-Za-z0-9._@+-][A-Za-z0-9._@+/-]{0,199}$/.test(clean) && !clean.split('/').includes('..');
    (ok ? kept : refused).push(ok ? clean : d.slice(0, 200));
  }
  return { kept, refused };
}

const DISABLED = 'if [ "$NODE_MODULES_CACHE" = false ]; then';

function restoreCache(dirs: string[]): string {
  if (!dirs.length) return '';
  const each = dirs
    .map(
      (d) =>
        `  if [ -e '/app/${d}' ]; then echo "       - ${d} (exists - skipping)"; ` +
        `elif [ -e '/cache/dirs/${d}' ]; then echo "       - ${d}"; mkdir -p "$(dirname '/app/${d}')"; cp -a '/cache/dirs/${d}' '/app/${d}'; ` +
        `else echo "       - ${d} (not cached - skipping)"; fi`,
    )
    .join('\n');
  return [
    header('Restoring cache'),
    `${DISABLED} echo "       Caching has been disabled because NODE_MODULES_CACHE=$NODE_MODULES_CACHE"; else`,
    '  echo "       Loading from cacheDirectories (package.json):"',
    each,
    'fi',
  ].join('\n');
}

function saveCache(dirs: string[]): string {
  if (!dirs.length) return '';
  const each = dirs
    .map(
      (d) =>
        `  rm -rf '/cache/dirs/${d}'; if [ -e '/app/${d}' ]; then mkdir -p "$(dirname '/cache/dirs/${d}')"; ` +
        `cp -a '/app/${d}' '/cache/dirs/${d}'; echo "       - ${d}"; else echo "       - ${d} (nothing to cache)"; fi`,
    )
    .join('\n');
  return [`${DISABLED} :; else`, `  ${header('Caching build')}`, each, 'fi'].join('\n');
}

function buildScript(plan: PackageManagerPlan): string {
  const { scripts } = plan.pkg;
  const lines = [header('Build')];
  if (scripts['scalingo-postbuild'] !== undefined) {
    if (scripts.build !== undefined) lines.push(say('       Detected both "build" and "scalingo-postbuild" scripts'));
    lines.push(runScript(plan, 'scalingo-postbuild'));
  } else if (scripts.build !== undefined)
    lines.push(`if [ "$NPM_NO_BUILD" != true ]; then`, runScript(plan, 'build', true), 'fi');
  return lines.join('\n');
}

/** Whether a build script (which may need the devDependencies) runs after the install. */
export const hasBuild = (plan: PackageManagerPlan) =>
  plan.pkg.scripts['scalingo-postbuild'] !== undefined || plan.pkg.scripts.build !== undefined;

export interface NodeScripts {
  /** The dependency step, or null when the whole lifecycle runs with the code. */
  dependencies: string | null;
  /** The code step, or null when the code needs none (then it is one COPY layer). */
  code: string | null;
}

/**
 * The lifecycle's shell scripts. `split`: the install runs without the code (the dependency layer),
 * so only what needs the code (the build, the cleanup) runs in the code step.
 */
export function nodeScripts(p: LifecycleParts, split: boolean, dirs: string[]): NodeScripts {
  const { plan } = p;
  const { scripts } = plan.pkg;
  const prebuild =
    scripts['scalingo-prebuild'] !== undefined ? `${header('Prebuild')}\n${runScript(plan, 'scalingo-prebuild')}` : '';
  const cleanup =
    scripts['scalingo-cleanup'] !== undefined ? `${header('Cleanup')}\n${runScript(plan, 'scalingo-cleanup')}` : '';
  const build = hasBuild(plan) ? buildScript(plan) : '';
  const join = (parts: string[]) => `${PRELUDE}${[managerEnv(plan), ...parts].filter(Boolean).join('\n')}\n`;
  if (!split)
    return {
      dependencies: null,
      code: join([
        setupTool(p),
        prebuild,
        restoreCache(dirs),
        install(p),
        build || header('Build'),
        saveCache(dirs),
        prune(plan),
        cleanup,
      ]),
    };
  const pruneWithDeps = !build;
  return {
    dependencies: join([setupTool(p), install(p), pruneWithDeps ? `${header('Build')}\n${prune(plan)}` : '']),
    code:
      build || cleanup
        ? join([restoreCache(dirs), build, saveCache(dirs), pruneWithDeps ? '' : prune(plan), cleanup])
        : null,
  };
}
