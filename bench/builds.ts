import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { run, s, timed } from './lib/commands.ts';
import { nodeBaseImage } from './lib/node-image.ts';
import { bestMedian, median } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

const MAX_RATIO = 1.2;
const BASE_LABEL = 'io.scalingo-emulator.bench=builds';

interface Kind {
  lang: 'node' | 'python' | 'ruby';
  fixture: string;
  /** The file the one-file change edits. */
  changed: string;
  /** A plain Dockerfile doing the same work on the same stack image, dependency files first. */
  dockerfile(stack: string): string;
}

const KINDS: Kind[] = [
  {
    lang: 'node',
    fixture: 'node-pg-redis',
    changed: 'server.js',
    dockerfile: (stack) =>
      `FROM ${stack}\nWORKDIR /app\nCOPY package.json package-lock.json ./\nCOPY .npm-cache /tmp/npm-cache\n` +
      'RUN npm ci --offline --cache /tmp/npm-cache --no-audit --no-fund --loglevel=error\nCOPY . .\n',
  },
  {
    lang: 'python',
    fixture: 'python-web',
    changed: 'app.py',
    dockerfile: (stack) =>
      `FROM ${stack}\nWORKDIR /app\nCOPY requirements.txt ./\nRUN python3 -m venv /app/.venv\nCOPY . .\n`,
  },
  {
    lang: 'ruby',
    fixture: 'ruby-web',
    changed: 'app.rb',
    dockerfile: (stack) =>
      `FROM ${stack}\nWORKDIR /app\nCOPY Gemfile ./\nRUN bundle config set --local path vendor/bundle && bundle install\nCOPY . .\n`,
  },
];

/**
 * Issue 25, builds: the buildpack-like build of a sample app (empty build cache, then after a one-file
 * change) against a plain `docker build` of the same app on the same stack image, in the same run.
 */
export const section: Section = {
  name: 'builds',
  description:
    'buildpack-like builds (Node, Python, Ruby): first build and cached rebuild vs a plain docker build (issue 25)',
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
    const { stackRecipe } = (await import(
      src('runtime/image-recipes.ts')
    )) as typeof import('../src/runtime/image-recipes.ts');
    const runtime = createDockerRuntime();
    // The baseline builds on the image the emulator's build starts from (Node.js: the stack with the app's Node.js).
    const baseOf = async (lang: Kind['lang'], app: string): Promise<string> =>
      lang === 'node' ? nodeBaseImage(ctx.emulatorDir, runtime, app) : (stackRecipe(lang)?.tag ?? '');
    const rounds = ctx.quick ? 1 : ctx.rounds;
    const tmp = mkdtempSync(join(tmpdir(), 'bench-builds-'));
    const fig = new Map<string, number[]>();
    const add = (k: string, v: number) => fig.set(k, [...(fig.get(k) ?? []), v]);
    const images: string[] = [];
    try {
      for (let round = 0; round < rounds; round++) {
        for (const kind of KINDS) {
          const dir = join(tmp, `${kind.lang}-${round}`);
          const app = join(dir, 'app');
          const ctxDir = join(dir, 'docker');
          cpSync(join(ctx.repoDir, 'fixtures/apps', kind.fixture), app, { recursive: true });
          const stack = await baseOf(kind.lang, app);
          cpSync(app, ctxDir, { recursive: true });
          const appId = `benchbuilds${kind.lang}${round}`;
          const marks: Record<string, number> = {};
          let t0 = 0;
          const say = (line: string) => {
            const at = (performance.now() - t0) / 1000;
            if (line.includes('Downloading the packages')) marks.fetch = at;
            if (/Installing (dependencies|gems)|No dependencies/.test(line) && marks.deps === undefined)
              marks.deps = at;
            if (line.includes('Adding the code')) marks.code = at;
          };
          const ours = (n: number) => {
            const tag = `scalingo-emulator/bench-builds-${appId}:${n}`;
            images.push(tag);
            t0 = performance.now();
            const cacheDir = join(dir, 'cache');
            return timed(() =>
              buildpackBuild(
                {
                  runtime,
                  instanceId: 'benchbuilds',
                  appId,
                  deploymentId: `${appId}-${n}`,
                  context: app,
                  cacheDir,
                  tag,
                  labels: {},
                  procfile: null,
                  say,
                },
                kind.lang,
              ),
            );
          };
          const plain = (n: number, ...extra: string[]) => {
            const tag = `scalingo-emulator/bench-builds-plain-${appId}:${n}`;
            images.push(tag);
            const env = { ...process.env, DOCKER_BUILDKIT: '0' };
            return timed(() =>
              run(
                'docker',
                ['build', '-q', '--network', 'none', '--label', BASE_LABEL, ...extra, '-t', tag, '-f', '-', ctxDir],
                { input: kind.dockerfile(stack), env },
              ),
            );
          };
          // The registry fetch a `docker build` would do in its `RUN npm ci` (its containers cannot reach the registry here).
          const fetch = () =>
            kind.lang === 'node'
              ? timed(() =>
                  run(
                    'npm',
                    [
                      'ci',
                      '--ignore-scripts',
                      '--omit=dev',
                      '--cache',
                      join(ctxDir, '.npm-cache'),
                      '--no-audit',
                      '--no-fund',
                      '--loglevel=error',
                    ],
                    { cwd: ctxDir },
                  ).then(() => rmSync(join(ctxDir, 'node_modules'), { recursive: true, force: true })),
                )
              : Promise.resolve(0);
          const plainFirst = round % 2 === 1;
          const baseline = async () => {
            const f = await fetch();
            add(`${kind.lang} plain fetch`, f);
            add(`${kind.lang} plain first`, f + (await plain(1, '--no-cache')));
          };
          if (plainFirst) await baseline();
          add(`${kind.lang} first`, await ours(1));
          for (const [k, v] of Object.entries(marks)) add(`${kind.lang} mark ${k}`, v);
          if (!plainFirst) await baseline();
          const comment = kind.lang === 'node' ? '//' : '#';
          for (const d of [app, ctxDir])
            writeFileSync(
              join(d, kind.changed),
              `${readFileSync(join(d, kind.changed), 'utf8')}\n${comment} change ${round}\n`,
            );
          if (plainFirst) add(`${kind.lang} plain cached`, await plain(2));
          add(`${kind.lang} cached`, await ours(2));
          if (!plainFirst) add(`${kind.lang} plain cached`, await plain(2));
          images.push(dependencyTag(appId));
          ctx.log(
            `builds round ${round + 1} ${kind.lang}: first ${s(fig.get(`${kind.lang} first`)?.at(-1) ?? 0)}, cached ${s(fig.get(`${kind.lang} cached`)?.at(-1) ?? 0)}`,
          );
        }
      }
    } finally {
      for (const tag of images) await runtime.removeImage(tag).catch(() => undefined);
      await runtime.close();
      rmSync(tmp, { recursive: true, force: true });
    }
    const m = (k: string) => median(fig.get(k) ?? []);
    const ratio = (lang: string, what: string) => m(`${lang} ${what}`) / m(`${lang} plain ${what}`);
    return {
      title: 'Builds: buildpack-like build vs a plain docker build of the same app',
      method:
        'The build function of the deployments (src/modules/deployments/slug-build.ts) called in the driver process on a copy of each sample app ' +
        '(fixtures/apps: node-pg-redis with pg + redis, 24 npm packages; python-web and ruby-web, standard library only) and the real engine: ' +
        '"first" with an empty build cache and no dependency image (a new app each round), "cached" after a one-line change of the main source file. ' +
        'Baseline in the same run: `docker build` (CLI, classic builder as the engine API, --network none) of the same files on the same stack image ' +
        '(Node.js: the stack with the Node.js the app gets, which the emulator builds on too), ' +
        'with a Dockerfile copying the dependency files first, installing, then `COPY . .`; first with --no-cache, then after the same change (layer cache). ' +
        "Build containers cannot reach the npm registry here, so the baseline's first build adds the registry fetch its `RUN npm ci` would do: " +
        '`npm ci --ignore-scripts` on the host into an empty cache, which goes into its context; the emulator fetches the same way. ' +
        `Each round builds both, alternating which goes first; ${rounds} round(s).`,
      tables: [
        {
          headers: [
            'app',
            'emulator first',
            'plain docker build first (of which registry fetch)',
            'ratio',
            'emulator cached',
            'plain docker build cached',
            'ratio',
          ],
          rows: KINDS.map((k) => [
            k.lang,
            bestMedian(fig.get(`${k.lang} first`) ?? [], s, false),
            `${bestMedian(fig.get(`${k.lang} plain first`) ?? [], s, false)} (${s(m(`${k.lang} plain fetch`))})`,
            `${ratio(k.lang, 'first').toFixed(2)}×`,
            bestMedian(fig.get(`${k.lang} cached`) ?? [], s, false),
            bestMedian(fig.get(`${k.lang} plain cached`) ?? [], s, false),
            `${ratio(k.lang, 'cached').toFixed(2)}×`,
          ]),
        },
        {
          caption:
            'Where the emulator\'s first build goes (median seconds from the start of the build; "—": no such step)',
          headers: ['app', 'registry fetch starts', 'first line of the dependency step', 'code layer starts', 'done'],
          rows: KINDS.map((k) => [
            k.lang,
            ...['fetch', 'deps', 'code'].map((x) =>
              fig.has(`${k.lang} mark ${x}`) ? s(m(`${k.lang} mark ${x}`)) : '—',
            ),
            s(m(`${k.lang} first`)),
          ]),
        },
      ],
      targets: ['first', 'cached'].map((w) => ({
        what: `Node app ${w} build vs plain docker build`,
        target: `≤ ${MAX_RATIO}×`,
        measured: `${ratio('node', w).toFixed(2)}× (median)`,
        met: ratio('node', w) <= MAX_RATIO,
      })),
    };
  },
};
