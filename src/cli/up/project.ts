// The project folder `up` runs: is it an app the platform would build, what is it called, what does
// its scalingo.json say. Read once per (re)deployment; every refusal is one UpError line.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { MANIFEST_MAX_BYTES, type Manifest, parseManifest } from './manifest.ts';
import { UpError } from './up-error.ts';

/** What makes a folder an app: a Procfile, a Dockerfile, or a language the stacks build (the platform's detection). */
const APP_MARKERS = [
  'Procfile',
  'Dockerfile',
  'package.json',
  'requirements.txt',
  'Pipfile',
  'setup.py',
  'pyproject.toml',
  'Gemfile',
  'config.ru',
  'index.php',
  'composer.json',
  'go.mod',
];

export interface Project {
  dir: string;
  appName: string;
  /** {} when the folder has no scalingo.json. */
  manifest: Manifest;
  /** The marker files found (for the first lines printed). */
  detected: string[];
}

/** The platform's app names: 6 to 48 lowercase letters, digits and dashes, starting with a letter. */
export function appNameFrom(folder: string): string {
  let name = folder
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '');
  if (!name) name = 'app';
  if (name.length < 6) name = `${name}-local`.slice(0, 48);
  return name.slice(0, 48).replace(/-+$/, '');
}

export function readProject(dirArg: string, appOption?: string): Project {
  const dir = resolve(dirArg);
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new UpError(`${dir}: no such folder`);
  }
  if (!st.isDirectory()) throw new UpError(`${dir}: not a folder`);
  const detected = APP_MARKERS.filter((f) => existsSync(join(dir, f)));
  if (!detected.length) {
    throw new UpError(
      `${dir} is not an app: no Procfile, Dockerfile, package.json, requirements.txt, Pipfile, Gemfile… (what the platform detects)`,
    );
  }
  const appName = appOption ?? appNameFrom(basename(dir));
  if (!/^[a-z][a-z0-9-]{5,47}$/.test(appName)) {
    throw new UpError(
      `--app ${appName}: an app name is 6 to 48 lowercase letters, digits and dashes, starting with a letter`,
    );
  }
  return { dir, appName, manifest: readManifest(dir), detected };
}

export function readManifest(dir: string): Manifest {
  const file = join(dir, 'scalingo.json');
  if (!existsSync(file)) return {};
  const st = statSync(file);
  if (!st.isFile()) throw new UpError('scalingo.json: not a regular file');
  if (st.size > MANIFEST_MAX_BYTES) throw new UpError(`scalingo.json: larger than ${MANIFEST_MAX_BYTES / 1024} KB`);
  return parseManifest(readFileSync(file, 'utf8'));
}
