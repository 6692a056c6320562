import { afterEach, describe, expect, it } from 'vitest';
import { EngineUnavailableError } from '../../src/runtime/errors.ts';
import { findRecipe, type ImageRecipe, RECIPE_LABEL, recipeHash } from '../../src/runtime/image-recipes.ts';
import { ensureRecipeImage } from '../../src/runtime/recipe-images.ts';
import { BASE_IMAGE_LABEL, registryBase, registryDockerfile } from '../../src/runtime/registry-images.ts';
import { debianSuite } from '../../src/runtime/rootfs.ts';
import { withShutdownGate } from '../../src/runtime/shutdown-gate.ts';
import { FakeRuntime } from '../support/fake-runtime.ts';

// Issue 36: `images.source` — the engine's registry (the official image pulled by the engine, adapted by a build),
// the Debian path, each way alone, and the error naming both when none gives the image. The engine here is the
// fake one (its pulls fail as an offline engine's do, or succeed where a test says); the real engine's run is
// test/docker/image-sources.test.ts.
const recipe = (id: string) => findRecipe(id) as ImageRecipe;
const path = process.env.PATH;
afterEach(() => {
  process.env.PATH = path;
});

/** An engine whose registry has every image: records the pulls and the Dockerfiles built. */
class OnlineRuntime extends FakeRuntime {
  pulled: string[] = [];
  dockerfiles: string[] = [];
  override async pullImage(ref: string) {
    this.pulled.push(ref);
    return { digest: `${ref.split(':')[0]}@sha256:${'a'.repeat(64)}` };
  }
  override async buildImage(o: { tag: string; labels: Record<string, string>; dockerfile?: string }) {
    this.dockerfiles.push(o.dockerfile ?? '');
    await super.buildImage(o);
  }
}

describe('image sources', () => {
  it('auto: the engine pulls the official image and a build adapts it, labelled with the recipe hash and the digest', async () => {
    const runtime = new OnlineRuntime();
    const lines: string[] = [];
    await ensureRecipeImage(runtime, recipe('postgresql'), { onLine: (l) => lines.push(l) });
    expect(runtime.pulled).toEqual(['postgres:15']);
    expect(await runtime.imageLabels('scalingo-emulator/addon-postgresql:1')).toMatchObject({
      [RECIPE_LABEL]: recipeHash(recipe('postgresql'), debianSuite()),
      [BASE_IMAGE_LABEL]: `postgres@sha256:${'a'.repeat(64)}`,
      'io.scalingo-emulator.base': 'registry',
    });
    expect(lines).toContain(
      `pulled postgres@sha256:${'a'.repeat(64)}; adapting it (packages, the emulator's settings)`,
    );
    // The same recipe's image is current whichever way made it: nothing more is pulled.
    expect(await ensureRecipeImage(runtime, recipe('postgresql'))).toBe(false);
    expect(runtime.pulled).toHaveLength(1);
  });

  it("the stacks start from Debian's slim image of the recipe's suite, the servers from their official images", () => {
    expect(registryBase(recipe('node'), 'bookworm').image).toBe('debian:bookworm-slim');
    expect(registryBase(recipe('python-trixie'), 'trixie').image).toBe('debian:trixie-slim');
    expect(['postgresql', 'mysql', 'redis'].map((id) => registryBase(recipe(id), 'bookworm').image)).toEqual([
      'postgres:15',
      'mariadb:10.11',
      'redis:7',
    ]);
  });

  it("the adapting Dockerfile installs only the missing packages, drops the official entrypoint, keeps the recipe's settings", () => {
    const node = recipe('node');
    const file = registryDockerfile(node, registryBase(node, 'bookworm'));
    const lines = file.split('\n');
    expect(lines[0]).toBe('FROM debian:bookworm-slim');
    expect(lines).toContain('ENTRYPOINT []');
    const [install, customize] = lines.filter((l) => l.startsWith('RUN ')).map((l) => JSON.parse(l.slice(4)));
    expect(install[2]).toContain('for p in ca-certificates git g++ make python3 postgresql-client');
    expect(install[2]).toContain('grep -q \'install ok installed\' || missing="$missing $p"');
    expect(install[2]).toContain('if [ -n "$missing" ]; then');
    expect(customize[2]).toContain('chmod 755 /usr/local/bin/dbclient-fetcher');
    for (const change of node.changes) expect(lines).toContain(change);
  });

  it('registry: the pull failure is the error, naming the Debian path as the other way; nothing else is tried', async () => {
    const runtime = new FakeRuntime();
    const lines: string[] = [];
    await expect(
      ensureRecipeImage(runtime, recipe('redis'), { source: 'registry', onLine: (l) => lines.push(l) }),
    ).rejects.toThrow(
      /^building the Redis server image \(scalingo-emulator\/addon-redis:2\) failed: the engine's registry could not give it \(images\.source "registry"\): pulling redis:7 failed: .*no such host.*; the other way is the Debian path \(images\.source "auto" or "debian", with mmdebstrap and a Debian mirror\)$/,
    );
    expect(lines.some((l) => l.startsWith('building from Debian'))).toBe(false);
  });

  it('debian: no pull; without mmdebstrap the error names the registry as the other way', async () => {
    process.env.PATH = '/nonexistent';
    const runtime = new OnlineRuntime();
    await expect(ensureRecipeImage(runtime, recipe('redis'), { source: 'debian' })).rejects.toThrow(
      /failed: mmdebstrap is not installed: .*; the other way is the engine's registry \(images\.source "auto" or "registry": the engine pulls redis:7\)$/,
    );
    expect(runtime.pulled).toEqual([]);
  });

  it('an engine out of reach or the emulator stopping ends the build at once: the Debian path is not tried', async () => {
    const lines: string[] = [];
    const down = new FakeRuntime();
    down.pullImage = async () => {
      throw new EngineUnavailableError(Object.assign(new Error('connect ENOENT'), { code: 'ENOENT' }));
    };
    await expect(ensureRecipeImage(down, recipe('redis'), { onLine: (l) => lines.push(l) })).rejects.toThrow(
      /^building the Redis server image \(scalingo-emulator\/addon-redis:2\) failed: the Docker engine cannot be reached \(ENOENT\)$/,
    );
    const gate = withShutdownGate(new OnlineRuntime());
    await gate.close();
    await expect(ensureRecipeImage(gate.runtime, recipe('redis'), { onLine: (l) => lines.push(l) })).rejects.toThrow(
      /the emulator is stopping: pullImage refused$/,
    );
    expect(lines.some((l) => /Debian/.test(l))).toBe(false);
  });
});
