// The registry path of the recipe images (issue #36): the official image of the same software, pulled by the
// engine from where its registry configuration says (Docker Hub or a mirror), then adapted by a local build —
// the recipe's missing Debian packages, its customize commands, its ENV/WORKDIR/CMD, no entrypoint of the
// official image (the emulator runs its own scripts), and the labels: the recipe hash (the same as the Debian
// path's, so either image is current) and the digest the engine pulled.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineUnavailableError } from './errors.ts';
import { type ImageRecipe, RECIPE_LABEL } from './image-recipes.ts';
import { type ContainerRuntime } from './runtime.ts';
import { EmulatorStoppingError } from './shutdown-gate.ts';

/** Where a recipe image comes from: `auto` tries the engine's registry, then the Debian path. */
export type ImageSource = 'auto' | 'registry' | 'debian';

/** Label naming the image a registry-made image was built from, by digest (`postgres@sha256:…`). */
export const BASE_IMAGE_LABEL = 'io.scalingo-emulator.base-image';

/** The official image a recipe starts from, what it may lack, and what the official image needs besides the recipe. */
export interface RegistryBase {
  image: string;
  /** Debian packages the build installs when the image lacks them (`dpkg-query`). */
  packages: string[];
  customize: string[];
}

// The addon servers' official images, at the versions the Debian path installs (bookworm: PostgreSQL 15,
// MariaDB 10.11, Redis 7). Their servers run as the emulator's scripts say (addon-kinds.ts), which read
// Debian's self-signed "snakeoil" pair for TLS: ssl-cert brings it, and its group lets postgres read the key.
const ADDON_IMAGES: Record<string, RegistryBase> = {
  postgresql: {
    image: 'postgres:15',
    packages: ['ssl-cert'],
    customize: ['id -nG postgres | grep -qw ssl-cert || usermod -aG ssl-cert postgres'],
  },
  mysql: { image: 'mariadb:10.11', packages: ['ssl-cert'], customize: [] },
  redis: { image: 'redis:7', packages: ['ssl-cert'], customize: [] },
};

/** The registry base of a recipe: `debian:<suite>-slim` with the stack's packages for a stack, the official server image for an addon. */
export function registryBase(recipe: ImageRecipe, suite: string): RegistryBase {
  if (recipe.kind === 'stack') return { image: `debian:${suite}-slim`, packages: recipe.packages, customize: [] };
  const base = ADDON_IMAGES[recipe.id];
  if (!base) throw new Error(`no official image is known for the ${recipe.title}`);
  return base;
}

/** The Dockerfile adapting the official image: only what is missing is installed (an image that has it all needs no mirror). */
export function registryDockerfile(recipe: ImageRecipe, base: RegistryBase): string {
  const install = [
    'set -e',
    'missing=""',
    `for p in ${base.packages.join(' ')}; do`,
    `  dpkg-query -W -f='\${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"`,
    'done',
    'if [ -n "$missing" ]; then',
    '  echo "installing from Debian:$missing"',
    '  apt-get update',
    '  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing',
    '  rm -rf /var/lib/apt/lists/*',
    'else echo "the image has every package the recipe needs"; fi',
  ].join('\n');
  const customize = ['set -e', ...recipe.customize, ...base.customize].join('\n');
  return [
    `FROM ${base.image}`,
    'ENTRYPOINT []',
    `RUN ${JSON.stringify(['sh', '-c', install])}`,
    `RUN ${JSON.stringify(['sh', '-c', customize])}`,
    ...recipe.changes,
    '',
  ].join('\n');
}

/** Pulls the recipe's official image through the engine and builds the recipe's image on it. Throws with the engine's reason. */
export async function buildFromRegistry(
  runtime: ContainerRuntime,
  recipe: ImageRecipe,
  suite: string,
  hash: string,
  say: (line: string) => void,
): Promise<void> {
  const base = registryBase(recipe, suite);
  say(`pulling ${base.image} from the engine's registry`);
  let digest: string;
  try {
    ({ digest } = await runtime.pullImage(base.image, say));
  } catch (err) {
    if (endsEveryWay(err)) throw err;
    throw new Error(`pulling ${base.image} failed: ${engineReason(err)}`);
  }
  say(`pulled ${digest}; adapting it (packages, the emulator's settings)`);
  const context = mkdtempSync(join(tmpdir(), 'scalingo-emu-registry-'));
  try {
    await runtime.buildImage({
      contextDir: context,
      dockerfile: registryDockerfile(recipe, base),
      tag: recipe.tag,
      labels: { [RECIPE_LABEL]: hash, 'io.scalingo-emulator.base': 'registry', [BASE_IMAGE_LABEL]: digest },
      onLine: say,
    });
  } catch (err) {
    if (endsEveryWay(err)) throw err;
    throw new Error(`adapting ${base.image} failed: ${engineReason(err)}`);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}

/**
 * Failures no other way gets past: the engine out of reach (the Debian path imports into it too) or the emulator
 * stopping. They are thrown as they are, not as a reason to try the next way.
 */
export function endsEveryWay(err: unknown): boolean {
  return err instanceof EngineUnavailableError || err instanceof EmulatorStoppingError;
}

/** The engine's own words, without dockerode's `(HTTP code 500) server error - ` prefix. */
function engineReason(err: unknown): string {
  return ((err as Error).message ?? String(err)).replace(/^\(HTTP code \d+\)[^-]*- /, '').trim();
}
