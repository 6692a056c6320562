import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Language } from './buildpacks.ts';

// The runtime version an app asks for (engines.node, runtime.txt, the Gemfile's `ruby` or .ruby-version)
// picks the Debian suite its stack image is built from: each suite has one version of nodejs, python3
// and ruby, and the emulator installs nothing but Debian's packages. A version no reachable suite has
// ends the build with an error naming the ones that exist (docs/fidelity.md, "Runtime versions").

export interface StackVersion {
  /** The version Debian's package installs (patch levels follow the suite's point releases). */
  version: string;
  suite: string;
}

/** Stable suites only: testing (forky) and unstable move, so a version picked today could vanish. */
export const STACK_VERSIONS: Record<Language, StackVersion[]> = {
  node: [
    { version: '18.20.4', suite: 'bookworm' },
    { version: '20.19.2', suite: 'trixie' },
  ],
  python: [
    { version: '3.11.2', suite: 'bookworm' },
    { version: '3.13.5', suite: 'trixie' },
  ],
  ruby: [
    { version: '3.1.2', suite: 'bookworm' },
    { version: '3.3.8', suite: 'trixie' },
  ],
};

const NAMES: Record<Language, string> = { node: 'Node.js', python: 'Python', ruby: 'Ruby' };

export interface VersionRequest {
  /** As the app wrote it: ">=20", "3.11.4". */
  wanted: string;
  /** Where: "engines.node in package.json". */
  from: string;
}

const firstLine = (file: string) => (existsSync(file) ? (readFileSync(file, 'utf8').split('\n')[0] ?? '').trim() : '');

/** The version the app asks for, or null when it asks for none (the default stack then). */
export function requestedVersion(lang: Language, dir: string): VersionRequest | null {
  if (lang === 'node') {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { engines?: { node?: unknown } };
      const wanted = pkg.engines?.node;
      return typeof wanted === 'string' && wanted.trim()
        ? { wanted: wanted.trim().slice(0, 100), from: 'engines.node in package.json' }
        : null;
    } catch {
      return null; // npm itself reports an unreadable package.json
    }
  }
  if (lang === 'python') {
    const line = firstLine(join(dir, 'runtime.txt'));
    return line ? { wanted: line.slice(0, 100), from: 'runtime.txt' } : null;
  }
  const gemfile = existsSync(join(dir, 'Gemfile')) ? readFileSync(join(dir, 'Gemfile'), 'utf8') : '';
  const directive = /^\s*ruby\s*\(?\s*['"]([^'"\n]{1,50})['"]/m.exec(gemfile);
  if (directive) return { wanted: directive[1], from: 'the ruby directive of the Gemfile' };
  const line = firstLine(join(dir, '.ruby-version'));
  return line ? { wanted: line.slice(0, 100), from: '.ruby-version' } : null;
}

/**
 * The stack version that serves the request: for Node the highest one satisfying the semver range
 * (as the platform's buildpack resolves it), for Python and Ruby the one of the same major.minor.
 * Throws the build error naming the versions that exist.
 */
export function resolveVersion(lang: Language, req: VersionRequest): StackVersion {
  const versions = STACK_VERSIONS[lang];
  const found =
    lang === 'node'
      ? versions.filter((v) => satisfies(v.version, req.wanted)).pop()
      : versions.find((v) => sameMinor(v.version, req.wanted, lang));
  if (found) return found;
  const have = versions.map((v) => `${v.version} (Debian ${v.suite})`).join(' and ');
  const example =
    lang === 'node'
      ? `"engines": { "node": "${major(versions)}.x" }`
      : lang === 'python'
        ? `python-${minor(versions)}`
        : minor(versions);
  throw new Error(
    `${NAMES[lang]} ${JSON.stringify(req.wanted)} (${req.from}) is not available: the emulator builds its stacks from Debian's packages, ` +
      `which have ${NAMES[lang]} ${have}. Ask for one of those (e.g. ${example}).`,
  );
}

const major = (v: StackVersion[]) => (v.at(-1)?.version ?? '').split('.')[0];
const minor = (v: StackVersion[]) => (v.at(-1)?.version ?? '').split('.').slice(0, 2).join('.');

function sameMinor(version: string, wanted: string, lang: Language): boolean {
  const prefix = lang === 'python' ? /^python-/ : /^ruby-/;
  const m = /^(\d+)\.(\d+)(?:\.\d+)?(?:p\d+)?$/.exec(wanted.replace(prefix, ''));
  return m !== null && version.startsWith(`${m[1]}.${m[2]}.`);
}

type Triple = [number, number, number];

const cmp = (a: Triple, b: Triple) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/**
 * Whether a version satisfies an npm semver range: `||` alternatives of space-separated comparators
 * (`>=`, `>`, `<=`, `<`, `=`, `^`, `~`, x-ranges and partial versions, `A - B`). Anything else matches nothing.
 */
export function satisfies(version: string, range: string): boolean {
  const v = version.split('.').map(Number) as Triple;
  return range.split('||').some((alt) => {
    const text = alt.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1');
    const hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(text);
    const parts = hyphen ? [`>=${hyphen[1]}`, `<=${hyphen[2]}`] : text.split(/\s+/).filter(Boolean);
    return parts.every((p) => comparator(p)(v));
  });
}

function comparator(text: string): (v: Triple) => boolean {
  const m = /^(>=|<=|>|<|=|\^|~)?v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?$/.exec(text);
  if (!m) return () => false;
  const op = m[1] ?? '';
  const nums = [m[2], m[3], m[4]].map((x) => (x === undefined || /[xX*]/.test(x) ? null : Number(x)));
  const given = nums.indexOf(null) === -1 ? 3 : nums.indexOf(null);
  const lo: Triple = [nums[0] ?? 0, given > 1 ? (nums[1] ?? 0) : 0, given > 2 ? (nums[2] ?? 0) : 0];
  // The first version after the partial one: 18 → 19.0.0, 18.2 → 18.3.0 (Infinity for `*`).
  const next: Triple =
    given === 0
      ? [Number.POSITIVE_INFINITY, 0, 0]
      : given === 1
        ? [lo[0] + 1, 0, 0]
        : given === 2
          ? [lo[0], lo[1] + 1, 0]
          : [lo[0], lo[1], lo[2] + 1];
  switch (op) {
    case '>=':
      return (v) => cmp(v, lo) >= 0;
    case '>':
      return (v) => cmp(v, next) >= 0;
    case '<':
      return (v) => cmp(v, lo) < 0;
    case '<=':
      return (v) => cmp(v, next) < 0;
    case '^':
      return (v) => cmp(v, lo) >= 0 && cmp(v, lo[0] > 0 || given === 1 ? [lo[0] + 1, 0, 0] : [0, lo[1] + 1, 0]) < 0;
    case '~':
      return (v) => cmp(v, lo) >= 0 && cmp(v, given === 1 ? [lo[0] + 1, 0, 0] : [lo[0], lo[1] + 1, 0]) < 0;
    default:
      return (v) => cmp(v, lo) >= 0 && cmp(v, next) < 0;
  }
}
