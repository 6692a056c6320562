import { createHash } from 'node:crypto';
import { DATABASE_CLIENT_PACKAGES, dbclientFetcherInstall } from './dbclient-fetcher.ts';

// Recipes of the images built from Debian's packages (issue #15): language stacks the buildpack-like
// builds run on, and the servers of the database addons. Each is one `mmdebstrap` root filesystem
// (minbase + the listed packages) imported with `docker import` (the Debian path), or the official image of the same
// software pulled by the engine and adapted (registry-images.ts: the engine's registry).
// The recipe's hash is the image's label: an image is rebuilt only when its recipe changes.

export interface ImageRecipe {
  /** Short id: `npm run images -- node postgresql` builds these. */
  id: string;
  tag: string;
  /** What the image is, for people: "Node.js stack", "PostgreSQL server". */
  title: string;
  kind: 'stack' | 'addon';
  /** Debian packages installed on top of minbase. */
  packages: string[];
  /** Shell commands run in the finished root filesystem (mmdebstrap customize hook, chrooted). */
  customize: string[];
  /** `docker import --change` instructions (ENV, WORKDIR, CMD…). */
  changes: string[];
  /** Debian suite the packages come from when not the host's (a stack pinned to another suite's versions). */
  suite?: string;
}

/** Label holding the recipe hash; an image without it (or with another) is rebuilt. */
export const RECIPE_LABEL = 'io.scalingo-emulator.recipe';

const STACK_ENV = [
  'ENV PATH=/app/.venv/bin:/app/node_modules/.bin:/app/bin:/usr/local/bin:/usr/bin:/bin',
  'ENV HOME=/app',
  'ENV LANG=C.UTF-8',
  'WORKDIR /app',
  'CMD ["sh"]',
];
const APP_DIR = ['mkdir -p /app /tmp/uploads', 'chmod 1777 /tmp/uploads'];
// Every stack has the clients of the database consoles (`pgsql-console`…) and their `dbclient-fetcher`.
const STACK_CUSTOMIZE = [...APP_DIR, ...dbclientFetcherInstall()];

export const IMAGE_RECIPES: ImageRecipe[] = [
  {
    id: 'node',
    title: 'Node.js stack',
    tag: 'scalingo-emulator/stack-node:3',
    kind: 'stack',
    // No Node.js from Debian: each app gets the official binary of the version it asks for on top
    // (deployments/node-runtime.ts). g++, make and python3 are what node-gyp needs for native modules.
    packages: ['ca-certificates', 'git', 'g++', 'make', 'python3', ...DATABASE_CLIENT_PACKAGES],
    customize: STACK_CUSTOMIZE,
    changes: [...STACK_ENV, 'ENV NODE_ENV=production'],
  },
  {
    id: 'python',
    title: 'Python stack',
    tag: 'scalingo-emulator/stack-python:2',
    kind: 'stack',
    packages: ['python3', 'python3-pip', 'python3-venv', 'ca-certificates', ...DATABASE_CLIENT_PACKAGES],
    customize: STACK_CUSTOMIZE,
    changes: [...STACK_ENV, 'ENV PYTHONUNBUFFERED=1'],
  },
  {
    id: 'ruby',
    title: 'Ruby stack',
    tag: 'scalingo-emulator/stack-ruby:2',
    kind: 'stack',
    packages: ['ruby', 'bundler', 'ca-certificates', ...DATABASE_CLIENT_PACKAGES],
    customize: STACK_CUSTOMIZE,
    changes: [...STACK_ENV, 'ENV BUNDLE_PATH=/app/vendor/bundle', 'ENV BUNDLE_WITHOUT=development:test'],
  },
  {
    id: 'postgresql',
    title: 'PostgreSQL server',
    tag: 'scalingo-emulator/addon-postgresql:1',
    kind: 'addon',
    // The package's own cluster is dropped: the addon's data directory lives in a volume.
    packages: ['postgresql', 'postgresql-client'],
    customize: [
      'rm -rf /var/lib/postgresql/15/main /etc/postgresql/15/main',
      'mkdir -p /var/run/postgresql',
      'chown postgres:postgres /var/run/postgresql',
    ],
    changes: ['ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/bin:/bin', 'ENV LANG=C.UTF-8'],
  },
  {
    id: 'mysql',
    title: 'MySQL (MariaDB) server',
    tag: 'scalingo-emulator/addon-mysql:2',
    kind: 'addon',
    // ssl-cert: Debian's self-signed "snakeoil" pair, which the server serves TLS with (force-ssl).
    packages: ['mariadb-server', 'mariadb-client', 'ssl-cert'],
    customize: [
      'rm -rf /var/lib/mysql/*',
      'mkdir -p /run/mysqld',
      'chown mysql:mysql /run/mysqld /var/lib/mysql',
      'usermod -aG ssl-cert mysql',
    ],
    changes: ['ENV LANG=C.UTF-8'],
  },
  {
    id: 'redis',
    title: 'Redis server',
    tag: 'scalingo-emulator/addon-redis:2',
    kind: 'addon',
    packages: ['redis-server', 'redis-tools', 'ssl-cert'],
    customize: [],
    changes: ['ENV LANG=C.UTF-8'],
  },
];

/**
 * Stacks of another Debian suite (`python-trixie`…): built on first use, like the others, but not by
 * default. Node.js has none: its version is the binary on top of the stack, not Debian's.
 */
const SUITE_STACK = /^(python|ruby)-([a-z]+)$/;

export function findRecipe(id: string): ImageRecipe | undefined {
  const m = SUITE_STACK.exec(id);
  if (m) return stackRecipe(m[1], m[2]);
  return IMAGE_RECIPES.find((r) => r.id === id || r.tag === id);
}

/**
 * The language stack built from one Debian suite's packages (each suite has one version of
 * python3 and ruby): the default stack when `suite` is undefined, else the same recipe
 * pinned to that suite, under its own tag.
 */
export function stackRecipe(lang: string, suite?: string): ImageRecipe | undefined {
  const base = IMAGE_RECIPES.find((r) => r.id === lang && r.kind === 'stack');
  if (!base || !suite) return base;
  return {
    ...base,
    id: `${lang}-${suite}`,
    tag: base.tag.replace(/:/, `-${suite}:`),
    title: `${base.title} (Debian ${suite})`,
    suite,
  };
}

/** Hash of what makes the image: packages, hooks, changes and the Debian suite. */
export function recipeHash(r: ImageRecipe, suite: string): string {
  return createHash('sha256')
    .update(
      JSON.stringify({ v: 1, suite, packages: [...r.packages].sort(), customize: r.customize, changes: r.changes }),
    )
    .digest('hex')
    .slice(0, 16);
}
