import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { followImageBuilds } from '../../src/cli/follow.ts';
import { createProgress } from '../../src/cli/progress.ts';
import { findRecipe, type ImageRecipe, recipeHash } from '../../src/runtime/image-recipes.ts';
import { ensureRecipeImage, type ImageBuildEvent, watchImageBuilds } from '../../src/runtime/recipe-images.ts';
import { debianSuite } from '../../src/runtime/rootfs.ts';
import { FakeRuntime } from '../support/fake-runtime.ts';

// One build per image at a time, shared by every waiter; a failure reaches each of them with the
// reason and is not remembered; the terminal's progress line follows every build. The build fails
// for real here: mmdebstrap is taken off PATH, as on a machine that lacks it.
const node = findRecipe('node') as ImageRecipe;
const path = process.env.PATH;
afterEach(() => {
  process.env.PATH = path;
});

describe('images built on first use', () => {
  it('shares one failing build between two needs, gives each the reason, and builds again at the next need', async () => {
    process.env.PATH = '/nonexistent';
    const runtime = new FakeRuntime();
    const events: ImageBuildEvent[] = [];
    const stop = watchImageBuilds((e) => events.push(e));
    const lines: string[][] = [[], []];
    const starts: string[] = [];
    try {
      const needs = [0, 1].map((i) =>
        ensureRecipeImage(runtime, node, { onStart: (r) => starts.push(r.title), onLine: (l) => lines[i].push(l) }),
      );
      const results = await Promise.allSettled(needs);
      for (const r of results) {
        expect(r.status).toBe('rejected');
        // Both ways are named: the Debian path's reason, then the engine's registry's (the fake engine is offline).
        expect((r as PromiseRejectedResult).reason.message).toBe(
          'building the Node.js stack image (scalingo-emulator/stack-node:3) failed: mmdebstrap is not installed: run `sudo bash scripts/docker-up.sh` (it installs it), or `apt-get install mmdebstrap`; ' +
            `and the engine's registry, the other way, could not give it either: pulling debian:${debianSuite()}-slim failed: ` +
            `Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host (pulling debian:${debianSuite()}-slim) ` +
            '(let the engine reach Docker Hub, or give it a registry mirror)',
        );
      }
      expect(starts).toEqual(['Node.js stack', 'Node.js stack']);
      expect(events.filter((e) => e.phase === 'start')).toHaveLength(1);
      expect(events.filter((e) => e.phase === 'fail')).toHaveLength(1);
      // Tried in order, each said: the engine's registry, then the Debian path.
      expect(lines[0][0]).toBe(`pulling debian:${debianSuite()}-slim from the engine's registry`);
      expect(lines[0][1]).toMatch(
        /^the engine's registry could not give it \(pulling debian:\S+ failed: .*\): trying the Debian path$/,
      );
      expect(lines[0][2]).toMatch(
        /^building from Debian \S+ packages \(ca-certificates git g\+\+ make python3 postgresql-client mariadb-client-core redis-tools\)/,
      );
      expect(lines[1]).toEqual(lines[0]);

      await expect(ensureRecipeImage(runtime, node)).rejects.toThrow(/mmdebstrap is not installed/);
      expect(events.filter((e) => e.phase === 'start')).toHaveLength(2);
      expect(await runtime.imageLabels(node.tag)).toBeNull();
    } finally {
      stop();
    }
  });

  it('builds an image of another recipe again, and nothing when the image of the same recipe is there', async () => {
    const runtime = new FakeRuntime();
    const seen: ImageBuildEvent[] = [];
    const stop = watchImageBuilds((e) => seen.push(e));
    try {
      runtime.imageLabels = async () => ({ 'io.scalingo-emulator.recipe': 'another recipe' });
      process.env.PATH = '/nonexistent';
      await expect(ensureRecipeImage(runtime, node)).rejects.toThrow(/mmdebstrap is not installed/); // outdated: rebuilt
      runtime.imageLabels = async () => ({ 'io.scalingo-emulator.recipe': recipeHash(node, debianSuite()) });
      expect(await ensureRecipeImage(runtime, node)).toBe(false);
      expect(seen.filter((e) => e.phase === 'start')).toHaveLength(1);
    } finally {
      stop();
    }
  });

  it("the terminal's progress line: one task per build, its steps, then ✖ with the reason", async () => {
    let text = '';
    const stream = Object.assign(new Writable({ write: (c, _e, done) => ((text += String(c)), done()) }), {
      isTTY: true,
      columns: 400,
    });
    const progress = createProgress({ stream, logger: pino({ level: 'silent' }) });
    const stop = followImageBuilds(progress);
    process.env.PATH = '/nonexistent';
    try {
      await expect(ensureRecipeImage(new FakeRuntime(), node)).rejects.toThrow();
    } finally {
      stop();
    }
    expect(text).toContain('Building the Node.js stack image (first use)');
    expect(text).toMatch(/✖ Building the Node\.js stack image \(first use\).*mmdebstrap is not installed/);
  });
});
