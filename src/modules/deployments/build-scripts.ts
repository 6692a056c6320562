import { existsSync } from 'node:fs';
import { join } from 'node:path';

// The shell steps of the Python and Ruby builds (Node.js: node-lifecycle.ts). The dependency step runs
// in /app holding only the files that name the dependencies (requirements, Gemfile and lockfile,
// vendored packages), with the app's build cache bind-mounted at /cache and no network; its result is
// the app's dependency layer, reused as long as those files do not change. Their code is one COPY layer.

/** Files and directories (relative to the app) whose content makes the dependency layer (Node: node-build.ts). */
export function dependencyInputs(lang: 'python' | 'ruby', dir: string): string[] {
  const present = (names: string[]) => names.filter((f) => existsSync(join(dir, f)));
  if (lang === 'python') return present(['requirements.txt', 'Pipfile', 'Pipfile.lock', 'vendor']);
  return present(['Gemfile', 'Gemfile.lock', '.ruby-version', 'vendor/cache']);
}

const OFFLINE_HINT = (index: string, how: string) =>
  `echo "!     The ${index} cannot be reached from the emulator (its containers have no network; ` +
  `only Debian's mirror and the npm registry are reachable from this machine)."; ` +
  `echo "!     Vendor the dependencies in the app and deploy again: ${how}"`;

const PYTHON = String.raw`
export PIP_DISABLE_PIP_VERSION_CHECK=1
req=""
if [ -f requirements.txt ]; then req=requirements.txt
elif [ -f Pipfile.lock ]; then
  echo "-----> Pipfile.lock: installing its default packages with pip"
  python3 -c 'import json;d=json.load(open("Pipfile.lock"))["default"];print("\n".join(k+v.get("version","") for k,v in d.items()))' > /tmp/requirements.txt
  req=/tmp/requirements.txt
elif [ -f Pipfile ]; then echo "!     A Pipfile without Pipfile.lock: lock it (pipenv lock) or add a requirements.txt"; fi
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
`;

const RUBY = String.raw`
bundle config set --local path vendor/bundle >/dev/null
bundle config set --local without 'development:test' >/dev/null
if [ -d vendor/cache ]; then
  echo "-----> Installing gems from vendor/cache (bundle install --local)"
  bundle install --local || exit 1
else
  echo "-----> Installing gems (bundle install)"
  if ! bundle install --retry 0; then
    ${OFFLINE_HINT('RubyGems index', 'bundle package (or bundle cache) puts the gems in vendor/cache, installed with --local')}
    exit 1
  fi
fi
`;

/** The dependency step: a shell script run in /app (the dependency inputs only), the cache at /cache. */
export function dependencyScript(lang: 'python' | 'ruby'): string {
  return `set -e\ncd /app\n${lang === 'python' ? PYTHON : RUBY}`;
}
