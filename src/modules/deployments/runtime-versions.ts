import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Language } from './buildpacks.ts';

// The Python or Ruby version an app asks for (runtime.txt, the Gemfile's `ruby` or .ruby-version)
// picks the Debian suite its stack image is built from: each suite has one version of python3 and
// ruby, and the emulator installs nothing but Debian's packages for them. A version no reachable suite
// has ends the build with an error naming the ones that exist (docs/fidelity.md, "Runtime versions").
// Node.js is not Debian's: any published version, from the npm registry (node-versions.ts, node-runtime.ts).

/** The languages whose version is a Debian suite's. */
export type StackLanguage = Exclude<Language, 'node'>;

export interface StackVersion {
  /** The version Debian's package installs (patch levels follow the suite's point releases). */
  version: string;
  suite: string;
}

/** Stable suites only: testing (forky) and unstable move, so a version picked today could vanish. */
export const STACK_VERSIONS: Record<StackLanguage, StackVersion[]> = {
  python: [
    { version: '3.11.2', suite: 'bookworm' },
    { version: '3.13.5', suite: 'trixie' },
  ],
  ruby: [
    { version: '3.1.2', suite: 'bookworm' },
    { version: '3.3.8', suite: 'trixie' },
  ],
};

const NAMES: Record<StackLanguage, string> = { python: 'Python', ruby: 'Ruby' };

export interface VersionRequest {
  /** As the app wrote it: "python-3.11.4", "3.3.0". */
  wanted: string;
  /** Where: "runtime.txt". */
  from: string;
}

const firstLine = (file: string) => (existsSync(file) ? (readFileSync(file, 'utf8').split('\n')[0] ?? '').trim() : '');

/** The version the app asks for, or null when it asks for none (the default stack then). */
export function requestedVersion(lang: StackLanguage, dir: string): VersionRequest | null {
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
 * The stack version that serves the request: the one of the same major.minor. Throws the build error
 * naming the versions that exist.
 */
export function resolveVersion(lang: StackLanguage, req: VersionRequest): StackVersion {
  const versions = STACK_VERSIONS[lang];
  const found = versions.find((v) => sameMinor(v.version, req.wanted, lang));
  if (found) return found;
  const have = versions.map((v) => `${v.version} (Debian ${v.suite})`).join(' and ');
  const example = lang === 'python' ? `python-${minor(versions)}` : minor(versions);
  throw new Error(
    `${NAMES[lang]} ${JSON.stringify(req.wanted)} (${req.from}) is not available: the emulator builds its stacks from Debian's packages, ` +
      `which have ${NAMES[lang]} ${have}. Ask for one of those (e.g. ${example}).`,
  );
}

const minor = (v: StackVersion[]) => (v.at(-1)?.version ?? '').split('.').slice(0, 2).join('.');

function sameMinor(version: string, wanted: string, lang: StackLanguage): boolean {
  const prefix = lang === 'python' ? /^python-/ : /^ruby-/;
  const m = /^(\d+)\.(\d+)(?:\.\d+)?(?:p\d+)?$/.exec(wanted.replace(prefix, ''));
  return m !== null && version.startsWith(`${m[1]}.${m[2]}.`);
}
