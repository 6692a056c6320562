import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// Buildpack-like builds (issue #15): the language is detected from the files the platform's
// buildpacks look for, and a `web` process is given when no Procfile declares one. How the image is
// built (a dependency layer, then the code) is in slug-build.ts; the shell steps in build-scripts.ts.

export type Language = 'node' | 'python' | 'ruby';

/** The tag of an app's dependency image (dependency-layer.ts); it goes with the app. */
export const dependencyTag = (appId: string) => `scalingo-emulator/deps-${appId.toLowerCase()}:current`;

/** The files each buildpack detects, in the platform's detection order (alphabetical): the first match wins. */
const DETECTED_BY: [Language, string[]][] = [
  ['node', ['package.json']],
  ['python', ['requirements.txt', 'Pipfile', 'setup.py', 'pyproject.toml']],
  ['ruby', ['Gemfile']],
];

/** The buildpack that applies to the code and the file that made it apply, or null when none does. */
export function detectBuildpack(dir: string): { language: Language; file: string } | null {
  for (const [language, files] of DETECTED_BY) {
    const file = files.find((f) => existsSync(join(dir, f)));
    if (file) return { language, file };
  }
  return null;
}

/** Detection order of the platform's buildpacks: the first match wins. */
export function detectLanguage(dir: string): Language | null {
  return detectBuildpack(dir)?.language ?? null;
}

/** Process types given when there is no Procfile (or it lacks `web`), as the buildpacks do. */
export function defaultProcessTypes(lang: Language, dir: string): Record<string, string> {
  const has = (f: string) => existsSync(join(dir, f));
  if (lang === 'node') {
    let scripts: Record<string, unknown> = {};
    try {
      scripts =
        (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, unknown> })
          .scripts ?? {};
    } catch {
      // an unreadable package.json fails the install step with npm's own message
    }
    if (typeof scripts.start === 'string') return { web: 'npm start' };
    if (has('server.js')) return { web: 'node server.js' };
    if (has('index.js')) return { web: 'node index.js' };
    return {};
  }
  if (lang === 'python') {
    if (has('manage.py')) return { web: 'python3 manage.py runserver 0.0.0.0:$PORT' };
    for (const f of ['app.py', 'main.py', 'server.py']) if (has(f)) return { web: `python3 ${f}` };
    return {};
  }
  if (has('config.ru')) return { web: 'bundle exec rackup --host 0.0.0.0 --port $PORT' };
  for (const f of ['app.rb', 'server.rb']) if (has(f)) return { web: `bundle exec ruby ${f}` };
  return {};
}
