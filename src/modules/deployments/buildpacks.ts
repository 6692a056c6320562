import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// Buildpack-like builds (issue #15): the language is detected from the files the platform's
// buildpacks look for, dependencies are installed at build time inside a container of the
// language's stack image (no network: see npm-prefetch.ts for how npm packages get there), and a
// `web` process is given when no Procfile declares one. Caches live in /cache (the app's build
// cache dir, bind-mounted) and survive between builds until `DELETE …/caches/deployment`.

export type Language = 'node' | 'python' | 'ruby';

/** Detection order of the platform's buildpacks: the first match wins. */
export function detectLanguage(dir: string): Language | null {
  if (existsSync(join(dir, 'package.json'))) return 'node';
  if (['requirements.txt', 'Pipfile', 'setup.py', 'pyproject.toml'].some((f) => existsSync(join(dir, f)))) return 'python';
  if (existsSync(join(dir, 'Gemfile'))) return 'ruby';
  return null;
}

/** Process types given when there is no Procfile (or it lacks `web`), as the buildpacks do. */
export function defaultProcessTypes(lang: Language, dir: string): Record<string, string> {
  const has = (f: string) => existsSync(join(dir, f));
  if (lang === 'node') {
    let scripts: Record<string, unknown> = {};
    try {
      scripts = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, unknown> }).scripts ?? {};
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

const OFFLINE_HINT = (index: string, how: string) =>
  `echo "!     The ${index} cannot be reached from the emulator (its containers have no network; only Debian's mirror and the npm registry are reachable from this machine)."; echo "!     Vendor the dependencies in the app and deploy again: ${how}"`;

const NODE = String.raw`
echo "-----> Node.js app detected"
echo "       Using node $(node --version) and npm $(npm --version) from the stack image"
mkdir -p /cache/npm
key=$(cat package.json package-lock.json npm-shrinkwrap.json 2>/dev/null | sha256sum | cut -c1-16)
if [ -d node_modules ]; then
  echo "-----> node_modules is part of the code: rebuilding it (npm rebuild)"
  npm rebuild --offline --cache /cache/npm --no-audit --no-fund --loglevel=error
elif [ -d /cache/node_modules ] && [ "$(cat /cache/node_modules.key 2>/dev/null)" = "$key" ]; then
  echo "-----> Restoring node_modules from the build cache (package.json and lockfile unchanged)"
  cp -a /cache/node_modules ./node_modules
else
  if [ -f package-lock.json ] || [ -f npm-shrinkwrap.json ]; then cmd=ci; else cmd=install; fi
  echo "-----> Installing dependencies: npm $cmd (offline, from the package cache)"
  if ! npm $cmd --offline --cache /cache/npm --no-audit --no-fund --loglevel=error; then
    echo "!     npm could not install the dependencies from the package cache: the npm registry is reached from the emulator's host before the build (see the lines above)."
    exit 1
  fi
  rm -rf /cache/node_modules && cp -a node_modules /cache/node_modules 2>/dev/null && echo "$key" > /cache/node_modules.key || true
fi
if node -e 'process.exit(require("./package.json").scripts?.build ? 0 : 1)' 2>/dev/null; then
  echo "-----> Running the build script (npm run build)"
  npm run build
fi
`;

const PYTHON = String.raw`
echo "-----> Python app detected"
echo "       Using $(python3 --version) from the stack image"
export PIP_DISABLE_PIP_VERSION_CHECK=1
req=""
if [ -f requirements.txt ]; then req=requirements.txt
elif [ -f Pipfile.lock ]; then
  echo "-----> Pipfile.lock: installing its default packages with pip"
  python3 -c 'import json;d=json.load(open("Pipfile.lock"))["default"];print("\n".join(k+v.get("version","") for k,v in d.items()))' > /tmp/requirements.txt
  req=/tmp/requirements.txt
elif [ -f Pipfile ]; then echo "!     A Pipfile without Pipfile.lock: lock it (pipenv lock) or add a requirements.txt"; fi
key=$(cat "$req" 2>/dev/null | sha256sum | cut -c1-16)
if [ -d /cache/venv ] && [ "$(cat /cache/venv.key 2>/dev/null)" = "$key" ]; then
  echo "-----> Restoring the virtualenv from the build cache (requirements unchanged)"
  cp -a /cache/venv /app/.venv
else
  python3 -m venv /app/.venv
  if [ -n "$req" ] && grep -qv '^\s*\(#\|$\)' "$req"; then
    if [ -d vendor ]; then
      echo "-----> Installing dependencies from vendor/ (pip install --no-index --find-links vendor)"
      /app/.venv/bin/pip install --no-index --find-links vendor -r "$req" || exit 1
    else
      echo "-----> Installing dependencies (pip install -r $req)"
      if ! /app/.venv/bin/pip install --cache-dir /cache/pip --retries 0 --timeout 5 -r "$req"; then
        ${OFFLINE_HINT('Python package index (PyPI)', 'pip download -d vendor -r requirements.txt (wheels in vendor/ are installed with --no-index)')}
        exit 1
      fi
    fi
  else
    echo "-----> No dependencies to install"
  fi
  rm -rf /cache/venv && cp -a /app/.venv /cache/venv && echo "$key" > /cache/venv.key || true
fi
`;

const RUBY = String.raw`
echo "-----> Ruby app detected"
echo "       Using $(ruby --version | cut -d' ' -f1-2) and bundler $(bundle --version | awk '{print $NF}') from the stack image"
bundle config set --local path vendor/bundle >/dev/null
bundle config set --local without 'development:test' >/dev/null
if [ -d vendor/cache ]; then
  echo "-----> Installing gems from vendor/cache (bundle install --local)"
  bundle install --local || exit 1
else
  [ -d /cache/bundle ] && [ ! -d vendor/bundle ] && mkdir -p vendor && cp -a /cache/bundle vendor/bundle && echo "-----> Restored installed gems from the build cache"
  echo "-----> Installing gems (bundle install)"
  if ! bundle install --retry 0; then
    ${OFFLINE_HINT('RubyGems index', 'bundle package (or bundle cache) puts the gems in vendor/cache, installed with --local')}
    exit 1
  fi
  rm -rf /cache/bundle && [ -d vendor/bundle ] && cp -a vendor/bundle /cache/bundle || true
fi
`;

/** The shell script the build container runs in /app (the code), with the cache at /cache. */
export function compileScript(lang: Language): string {
  return `set -e\ncd /app\n${lang === 'node' ? NODE : lang === 'python' ? PYTHON : RUBY}\necho "-----> Build finished"\n`;
}
