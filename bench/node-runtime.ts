import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import semver from 'semver';
import { run, s, timed } from './lib/commands.ts';
import { median } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

// Issue 34: Node.js from the npm registry. The first build of a Node 24 app on a machine that has never
// fetched that Node.js (the binary fetched through the host's npm, its image built) against a plain
// `docker build` of the same app FROM an image that already has that Node.js; a second app on the same
// version (binary and image reused); a code-only change against a cached `docker build`.

const FIRST_MAX = 1.5;
const REUSE_MAX = 1.2;
const LABEL = 'io.scalingo-emulator.bench=node-runtime';

const docker = (...args: string[]) => execFileSync('docker', args, { encoding: 'utf8' }).trim();

/** A Node 24 release no other app on this machine asks for: the newest 24.x but one (the default is the newest). */
function benchVersion(): string {
  const arch = docker('info', '--format', '{{.Architecture}}') === 'aarch64' ? 'arm64' : 'x64';
  const listed = JSON.parse(
    execFileSync('npm', ['view', `node-linux-${arch}@24.x`, 'version', '--json'], { encoding: 'utf8' }),
  ) as string[];
  return semver.rsort(listed)[1] ?? semver.rsort(listed)[0];
}

const nodeImagesOf = (version: string) => [
  ...new Set(
    docker('images', '-q', '--filter', `reference=scalingo-emulator/node:${version}-npm*`).split('\n').filter(Boolean),
  ),
];

export const section: Section = {
  name: 'node-runtime',
  description: 'Node.js from the npm registry: first build on a new version, a second app, a code change (issue 34)',
  async run(ctx: BenchContext): Promise<Result> {
    const src = (p: string) => pathToFileURL(join(ctx.emulatorDir, 'src', p)).href;
    const { createDockerRuntime } = (await import(
      src('runtime/docker-runtime.ts')
    )) as typeof import('../src/runtime/docker-runtime.ts');
    const { buildpackBuild } = (await import(
      src('modules/deployments/slug-build.ts')
    )) as typeof import('../src/modules/deployments/slug-build.ts');
    const { dependencyTag } = (await import(
      src('modules/deployments/buildpacks.ts')
    )) as typeof import('../src/modules/deployments/buildpacks.ts');
    const runtime = createDockerRuntime();
    const version = benchVersion();
    const rounds = ctx.quick ? 1 : Math.min(ctx.rounds, 3);
    const tmp = mkdtempSync(join(tmpdir(), 'bench-node-runtime-'));
    const fig = new Map<string, number[]>();
    const add = (k: string, v: number) => fig.set(k, [...(fig.get(k) ?? []), v]);
    const images: string[] = [];
    const saved = { xdg: process.env.XDG_CACHE_HOME, npm: process.env.npm_config_cache };
    const restoreEnv = () => {
      for (const [k, v] of [
        ['XDG_CACHE_HOME', saved.xdg],
        ['npm_config_cache', saved.npm],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    };
    const hadImage = nodeImagesOf(version).length > 0;
    try {
      for (let round = 0; round < rounds; round++) {
        // A machine that never fetched this Node.js: no image of it, an empty registry cache and npm cache.
        for (const id of nodeImagesOf(version)) docker('rmi', '-f', id);
        process.env.XDG_CACHE_HOME = mkdtempSync(join(tmp, 'xdg-'));
        process.env.npm_config_cache = mkdtempSync(join(tmp, 'npm-'));
        const apps = ['a', 'b'].map((which) => {
          const dir = join(tmp, `${round}-${which}`);
          const app = join(dir, 'app');
          cpSync(join(ctx.repoDir, 'fixtures/apps/node-pg-redis'), app, { recursive: true });
          const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
          writeFileSync(join(app, 'package.json'), JSON.stringify({ ...pkg, engines: { node: version } }, null, 2));
          cpSync(app, join(dir, 'docker'), { recursive: true });
          return { dir, app, ctxDir: join(dir, 'docker'), appId: `benchnoderuntime${round}${which}` };
        });
        let nodeImage = '';
        const ours = (a: (typeof apps)[number], n: number) => {
          const tag = `scalingo-emulator/bench-node-runtime-${a.appId}:${n}`;
          images.push(tag, dependencyTag(a.appId));
          return timed(() =>
            buildpackBuild(
              {
                runtime,
                instanceId: 'benchnoderuntime',
                appId: a.appId,
                deploymentId: `${a.appId}-${n}`,
                context: a.app,
                cacheDir: join(a.dir, 'cache'),
                tag,
                labels: {},
                procfile: null,
                say: (line) => {
                  const m = /^-----> Installing binaries|Using default npm version: (\S+)/.exec(line);
                  if (m?.[1]) nodeImage = `scalingo-emulator/node:${version}-npm${m[1]}`;
                },
              },
              'node',
            ),
          );
        };
        const plain = (a: (typeof apps)[number], n: number, ...extra: string[]) => {
          const tag = `scalingo-emulator/bench-node-runtime-plain-${a.appId}:${n}`;
          images.push(tag);
          const dockerfile =
            `FROM ${nodeImage}\nWORKDIR /app\nCOPY package.json package-lock.json ./\nCOPY .npm-cache /tmp/npm-cache\n` +
            'RUN npm ci --offline --cache /tmp/npm-cache --no-audit --no-fund --loglevel=error\nCOPY . .\n';
          return timed(() =>
            run(
              'docker',
              ['build', '-q', '--network', 'none', '--label', LABEL, ...extra, '-t', tag, '-f', '-', a.ctxDir],
              { input: dockerfile, env: { ...process.env, DOCKER_BUILDKIT: '0' } },
            ),
          );
        };
        // The registry fetch the baseline's `RUN npm ci` would do (its containers cannot reach the registry here).
        const fetch = (a: (typeof apps)[number]) =>
          timed(() =>
            run(
              'npm',
              ['ci', '--ignore-scripts', '--omit=dev', '--cache', join(a.ctxDir, '.npm-cache'), '--no-audit'],
              { cwd: a.ctxDir },
            ).then(() => rmSync(join(a.ctxDir, 'node_modules'), { recursive: true, force: true })),
          );
        const [first, second] = apps;
        add('first', await ours(first, 1));
        add('plain first', (await fetch(first)) + (await plain(first, 1, '--no-cache')));
        add('second app', await ours(second, 1));
        for (const d of [first.app, first.ctxDir])
          writeFileSync(join(d, 'server.js'), `${readFileSync(join(d, 'server.js'), 'utf8')}\n// change ${round}\n`);
        add('plain cached', await plain(first, 2));
        add('cached', await ours(first, 2));
        restoreEnv();
        ctx.log(
          `node-runtime round ${round + 1} (Node.js ${version}): first ${s(fig.get('first')?.at(-1) ?? 0)}, ` +
            `plain ${s(fig.get('plain first')?.at(-1) ?? 0)}, second app ${s(fig.get('second app')?.at(-1) ?? 0)}, ` +
            `cached ${s(fig.get('cached')?.at(-1) ?? 0)} vs ${s(fig.get('plain cached')?.at(-1) ?? 0)}`,
        );
        for (const tag of images.splice(0)) await runtime.removeImage(tag).catch(() => undefined);
      }
    } finally {
      restoreEnv();
      for (const tag of images) await runtime.removeImage(tag).catch(() => undefined);
      // The Node.js image this section made goes too (one that was there before the run stays).
      if (!hadImage) for (const id of nodeImagesOf(version)) docker('rmi', '-f', id);
      await runtime.close();
      rmSync(tmp, { recursive: true, force: true });
    }
    const m = (k: string) => median(fig.get(k) ?? []);
    const ratio = (a: string, b: string) => m(a) / m(b);
    return {
      title: 'Node.js from the npm registry: builds of a Node 24 app vs a plain docker build',
      method:
        'The build function of the deployments (src/modules/deployments/slug-build.ts) called in the driver process on copies of ' +
        `fixtures/apps/node-pg-redis (pg + redis, 24 npm packages) with engines.node "${version}" (a Node 24 release no other app asks for), ` +
        'on the real engine. "First": that Node.js never fetched (its image removed, an empty registry cache and npm cache for the ' +
        "run: the host's npm downloads the binary, npm and corepack, then the Node.js image, the dependency layer and the code layer are built). " +
        '"Second app": another app on the same version (binary and image reused). "Cached": the first app after a one-line change of server.js. ' +
        'Baseline in the same run: `docker build` (CLI, classic builder, --network none) FROM the image that already has that Node.js, ' +
        'copying the dependency files, `npm ci --offline` from a cache the host filled with `npm ci --ignore-scripts` (timed and added), then ' +
        `\`COPY . .\`; first with --no-cache, then after the same change. ${rounds} round(s).`,
      tables: [
        {
          headers: ['build', 'emulator', 'plain docker build', 'ratio'],
          rows: [
            [
              'first (Node.js never fetched)',
              s(m('first')),
              s(m('plain first')),
              `${ratio('first', 'plain first').toFixed(2)}×`,
            ],
            [
              'second app, same version',
              s(m('second app')),
              s(m('plain first')),
              `${ratio('second app', 'plain first').toFixed(2)}×`,
            ],
            [
              'code-only change',
              s(m('cached')),
              s(m('plain cached')),
              `${ratio('cached', 'plain cached').toFixed(2)}×`,
            ],
          ],
        },
      ],
      targets: [
        {
          what: 'first build, Node.js never fetched, vs docker build with that Node.js in the image',
          target: `≤ ${FIRST_MAX}×`,
          measured: `${ratio('first', 'plain first').toFixed(2)}×`,
          met: ratio('first', 'plain first') <= FIRST_MAX,
        },
        {
          what: 'second app on the same version vs the same docker build',
          target: `≤ ${REUSE_MAX}×`,
          measured: `${ratio('second app', 'plain first').toFixed(2)}×`,
          met: ratio('second app', 'plain first') <= REUSE_MAX,
        },
        {
          what: 'code-only change vs a cached docker build',
          target: `≤ ${REUSE_MAX}×`,
          measured: `${ratio('cached', 'plain cached').toFixed(2)}×`,
          met: ratio('cached', 'plain cached') <= REUSE_MAX,
        },
      ],
    };
  },
};
