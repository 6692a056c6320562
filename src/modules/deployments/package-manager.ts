import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { parse as parseYaml } from 'yaml';
import { nearestVersions, newestForNode, publishedVersions } from './registry-packages.ts';

// Which package manager installs a Node.js app, and which version of it, as the platform's Node.js
// buildpack decides (Scalingo/nodejs-buildpack: bin/compile, lib/_failures.sh, lib/yarn-2.sh,
// lib/binaries.sh): the lockfile names the manager (package-lock.json or npm-shrinkwrap.json → npm,
// yarn.lock → Yarn, pnpm-lock.yaml → pnpm; none → npm); a yarn.lock with a `__metadata` block is
// Yarn 2+'s; `packageManager` picks the exact version, else `engines.yarn` / `engines.pnpm` a range,
// else the buildpack's default (Yarn 1.22.x, the latest pnpm). Yarn and pnpm are the registry's
// `yarn`, `@yarnpkg/cli-dist` (Yarn 2+) and `pnpm` packages, run with the container's `node`.

export type ManagerName = 'npm' | 'yarn' | 'pnpm';

export interface PackageJson {
  scripts: Record<string, string>;
  engines: Record<string, string>;
  packageManager: string | null;
  cacheDirectories: string[];
  hasDependencies: boolean;
  /** npm / Yarn workspaces: the packages of the workspace are part of the code. */
  workspaces: boolean;
}

export interface PackageManagerPlan {
  name: ManagerName;
  /** Yarn 2+ (a yarn.lock with `__metadata`). */
  berry: boolean;
  lockfile: string | null;
  /** The registry package that runs this manager (npm: null, the container's own npm). */
  tool: { pkg: string; version: string } | null;
  /** A Yarn release vendored in the project (.yarnrc.yml's `yarnPath`), run instead of a fetched one. */
  vendored: string | null;
  /** Yarn 2+ in Plug'n'Play mode (no `nodeLinker: node-modules`): its cache is part of the app. */
  pnp: boolean;
  pkg: PackageJson;
  /** The lines the buildpack prints under "Installing binaries" about the manager. */
  lines: string[];
}

const LOCKFILES: [string, string][] = [
  ['package-lock.json', 'npm'],
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'Yarn'],
];
/** What the manager files may weigh before they are parsed (a monorepo's lockfile stays well under it). */
const MAX_MANIFEST = 64 * 1024 * 1024;

/** package.json as the build reads it; throws the buildpack's "Unable to parse package.json". */
export function readPackageJson(dir: string): PackageJson {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('not an object');
  } catch (err) {
    throw new Error(`Unable to parse package.json: ${(err as Error).message}`);
  }
  const strings = (v: unknown): Record<string, string> =>
    v && typeof v === 'object'
      ? Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'))
      : {};
  const dirs = Array.isArray(raw.cacheDirectories) ? raw.cacheDirectories : raw.cache_directories;
  const deps = ['dependencies', 'devDependencies', 'optionalDependencies'];
  return {
    scripts: strings(raw.scripts),
    engines: strings(raw.engines),
    packageManager: typeof raw.packageManager === 'string' ? raw.packageManager.trim() : null,
    cacheDirectories: Array.isArray(dirs) ? dirs.filter((d): d is string => typeof d === 'string').slice(0, 20) : [],
    hasDependencies: deps.some((k) => Object.keys(strings(raw[k])).length > 0),
    workspaces: raw.workspaces !== undefined,
  };
}

/** The lockfile's manager; throws the buildpack's errors for several lockfiles. */
export function lockfileOf(dir: string): { lockfile: string | null; name: ManagerName } {
  const found = LOCKFILES.filter(([f]) => existsSync(join(dir, f)));
  if (found.length > 1) {
    const names = found.map(([, n]) => n).sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' }));
    throw new Error(
      `Multiple lockfiles found: several package managers (${names.join(',')}) have created lockfiles for this application, ` +
        `but only one can be used to install dependencies. Keep the lockfile of the package manager you use ` +
        `(${found.map(([f]) => f).join(', ')}), delete the others, then commit and deploy again.`,
    );
  }
  if (found.length && existsSync(join(dir, 'npm-shrinkwrap.json')))
    throw new Error(
      'Multiple lockfiles conflicting with npm-shrinkwrap.json: only one of yarn.lock, pnpm-lock.yaml, package-lock.json ' +
        'and npm-shrinkwrap.json may be in the application: keep one, then commit and deploy again.',
    );
  if (existsSync(join(dir, 'npm-shrinkwrap.json'))) return { lockfile: 'npm-shrinkwrap.json', name: 'npm' };
  const [first] = found;
  if (!first) return { lockfile: null, name: 'npm' };
  return { lockfile: first[0], name: first[1] === 'Yarn' ? 'yarn' : first[1] === 'pnpm' ? 'pnpm' : 'npm' };
}

/** Throws, as the buildpack does, when package.json names more than one package manager. */
function assertOneManagerDeclared(pkg: PackageJson): void {
  const fields: string[] = [];
  const managers = new Set<string>();
  for (const m of ['npm', 'yarn', 'pnpm'])
    if (pkg.engines[m]) managers.add(m), fields.push(`engines.${m} (${pkg.engines[m]})`);
  const declared = /^(yarn|pnpm)@/.exec(pkg.packageManager ?? '')?.[1];
  if (declared) managers.add(declared), fields.push(`packageManager (${pkg.packageManager})`);
  if (managers.size > 1)
    throw new Error(
      `Multiple package managers declared in package.json: only one of these fields should be used, remove the others: ${fields.join(', ')}`,
    );
}

/** Reads a manager file as text, refusing what is too large to parse. */
function readManagerFile(dir: string, name: string): string {
  const text = readFileSync(join(dir, name));
  if (text.length > MAX_MANIFEST) throw new Error(`${name} is larger than ${MAX_MANIFEST} bytes`);
  return text.toString('utf8');
}

/** The lockfile parsed as its manager would, so that a corrupt one fails with its name before anything runs. */
export function assertLockfileReadable(dir: string, lockfile: string | null): void {
  if (!lockfile) return;
  try {
    const text = readManagerFile(dir, lockfile);
    if (lockfile.endsWith('.json')) {
      const lock = JSON.parse(text) as unknown;
      if (!lock || typeof lock !== 'object') throw new Error('not a JSON object');
    } else if (lockfile === 'pnpm-lock.yaml') {
      const lock = parseYaml(text) as { lockfileVersion?: unknown } | null;
      if (!lock || typeof lock !== 'object' || lock.lockfileVersion === undefined)
        throw new Error('no lockfileVersion');
    } else if (/^__metadata:/m.test(text)) parseYaml(text);
    else {
      // Yarn 1's own format: comment lines, then `name@range:` entries with indented fields.
      const body = text.split('\n').filter((l) => l.trim() && !l.startsWith('#'));
      if (body.length && !body.some((l) => /^[^\s#].*:$/.test(l.trimEnd()))) throw new Error('no package entry');
    }
  } catch (err) {
    throw new Error(
      `${lockfile} cannot be read (${(err as Error).message.split('\n')[0]}): it is corrupt; ` +
        'regenerate it with its package manager, then commit and deploy again.',
    );
  }
}

interface YarnRc {
  yarnPath: string | null;
  nodeLinker: string | null;
}

function readYarnRc(dir: string): YarnRc | null {
  if (!existsSync(join(dir, '.yarnrc.yml'))) return null;
  let rc: Record<string, unknown> | null;
  try {
    rc = parseYaml(readManagerFile(dir, '.yarnrc.yml')) as Record<string, unknown> | null;
  } catch (err) {
    throw new Error(`.yarnrc.yml cannot be read: ${(err as Error).message.split('\n')[0]}`);
  }
  const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : null);
  return { yarnPath: str(rc?.yarnPath), nodeLinker: str(rc?.nodeLinker) };
}

/** `yarn@4.5.0+sha512.…` → `4.5.0`. */
const declaredVersion = (packageManager: string) => packageManager.replace(/^[^@]+@/, '').split('+')[0];

/**
 * The version of `pkg` a range asks for, or the build error naming the nearest published ones. With the
 * app's Node.js version, the newest whose `engines.node` accepts it, as `npm install -g` under that Node
 * picks it in the buildpack.
 */
async function resolveTool(pkg: string, range: string, from: string, node?: string): Promise<string> {
  if (!semver.validRange(range)) throw new Error(`${from}: "${range}" is not a valid semver version or range`);
  const versions = await publishedVersions(pkg);
  const found = node ? await newestForNode(pkg, range, node) : semver.maxSatisfying(versions, range);
  if (found) return found;
  throw new Error(
    `${from}: no published version of ${pkg} satisfies "${range}" (the nearest are ${nearestVersions(versions, range).join(', ')})`,
  );
}

/**
 * The manager of the app in `dir`, its version resolved in the registry through the host's npm (for the
 * app's Node.js version `node`, when known).
 */
export async function resolvePackageManager(dir: string, node?: string): Promise<PackageManagerPlan> {
  const pkg = readPackageJson(dir);
  const { lockfile, name } = lockfileOf(dir);
  assertOneManagerDeclared(pkg);
  assertLockfileReadable(dir, lockfile);
  const declared = pkg.packageManager;
  // engines.node and engines.npm are the Node.js runtime's lines (printed with it); these are the manager's.
  const lines: string[] = [];
  if (name === 'yarn' || pkg.engines.yarn)
    lines.push(`engines.yarn (package.json):   ${pkg.engines.yarn ?? 'unspecified (use default)'}`);
  if (name === 'pnpm' || pkg.engines.pnpm)
    lines.push(`engines.pnpm (package.json):   ${pkg.engines.pnpm ?? 'unspecified (use default)'}`);
  if (declared) lines.push(`packageManager (package.json): ${declared.split('+')[0]}`);
  const base = { name, lockfile, berry: false, tool: null, vendored: null, pnp: false, pkg, lines };
  if (name === 'npm') return base;
  if (name === 'pnpm') {
    const version = declared?.startsWith('pnpm@')
      ? await resolveTool('pnpm', declaredVersion(declared), 'packageManager (package.json)', node)
      : await resolveTool('pnpm', pkg.engines.pnpm ?? '*', 'engines.pnpm (package.json)', node);
    if (!declared?.startsWith('pnpm@') && !pkg.engines.pnpm)
      lines.push(
        `Default pnpm version used: no version in "packageManager" or "engines.pnpm" (package.json), pnpm ${version} (the latest).`,
      );
    lines.push(`Using pnpm ${version}`);
    return { ...base, tool: { pkg: 'pnpm', version } };
  }
  const berry = /^__metadata:/m.test(readManagerFile(dir, 'yarn.lock'));
  const rc = berry ? readYarnRc(dir) : null;
  const pnp = berry && rc?.nodeLinker !== 'node-modules';
  if (rc?.yarnPath) {
    if (!existsSync(join(dir, rc.yarnPath)))
      throw new Error(
        `Yarn was not found: .yarnrc.yml's yarnPath names ${rc.yarnPath}, which is not in the code; commit the .yarn directory (yarn set version berry).`,
      );
    if (!declared?.startsWith('yarn@')) {
      lines.push(`Using the Yarn release vendored in the project (${rc.yarnPath})`);
      return { ...base, berry, pnp, vendored: rc.yarnPath };
    }
  }
  const range = declared?.startsWith('yarn@') ? declaredVersion(declared) : (pkg.engines.yarn ?? '1.22.x');
  const from = declared?.startsWith('yarn@') ? 'packageManager (package.json)' : 'engines.yarn (package.json)';
  // As the buildpack: the `yarn` package when it has the version, else Yarn 2+'s `@yarnpkg/cli-dist`.
  const classic = !semver.validRange(range)
    ? null
    : node
      ? await newestForNode('yarn', range, node)
      : semver.maxSatisfying(await publishedVersions('yarn'), range);
  const tool = classic
    ? { pkg: 'yarn', version: classic }
    : { pkg: '@yarnpkg/cli-dist', version: await resolveTool('@yarnpkg/cli-dist', range, from, node) };
  if (berry && tool.pkg === 'yarn')
    throw new Error(
      rc
        ? "The 'yarnPath' could not be read from the '.yarnrc.yml' file: Yarn 2+ needs its version, in package.json's " +
            '"packageManager" (e.g. "yarn@4.5.0") or a release vendored with `yarn set version berry`.'
        : "The '.yarnrc.yml' file is not found: this yarn.lock is Yarn 2+'s; set the version with `yarn set version berry` " +
            'and commit .yarnrc.yml (or declare "packageManager": "yarn@<version>" in package.json).',
    );
  lines.push(`${berry ? 'Using' : 'Installed'} yarn ${tool.version}`);
  return { ...base, berry, pnp, tool };
}
