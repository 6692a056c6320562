import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  archiveOf,
  deleteApp,
  directPage,
  docker,
  postDeployment,
  routerPage,
  routerPortOf,
  runRawWeb,
  untilRunning,
  untilServed,
} from './lib/app-deploy.ts';
import { ensureEmulatorBundle } from './lib/bundle.ts';
import { ApiClient } from './lib/emulator-client.ts';
import { type Child, spawnEmulator } from './lib/processes.ts';
import { bestMedian, median, ms, sleep } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

const MAX_RATIO = 1.2;
const RAW_LABEL = 'io.scalingo-emulator.bench=deploy-raw';
const STACK = 'scalingo-emulator/stack-busybox:1';

interface Kind {
  key: 'procfile' | 'dockerfile';
  label: string;
  fixture: string;
  app: string;
  /** The page's file in the fixture, rewritten with a new marker every round. */
  page: string;
  /** What the raw baseline builds: the Dockerfile the emulator writes for a Procfile app, or the app's own. */
  dockerfile(dir: string): string;
  /** The raw container's command after the image (none: the image's CMD). */
  command(dir: string): string[];
}

const webCommand = (dir: string) => /^web:\s*(.+)$/m.exec(readFileSync(join(dir, 'Procfile'), 'utf8'))![1];

const KINDS: Kind[] = [
  {
    key: 'procfile',
    label: 'Procfile app (busybox-web, busybox stack)',
    fixture: 'busybox-web',
    app: 'bench-deploy-procfile',
    page: 'index.html',
    // src/modules/deployments/build-release.ts builds a Procfile app on a stack with exactly this (its labels
    // appended as one LABEL instruction: the one step `--label` adds here).
    dockerfile: () => `FROM ${STACK}\nCOPY . /app\nWORKDIR /app\n`,
    command: (dir) => ['sh', '-c', webCommand(dir)],
  },
  {
    key: 'dockerfile',
    label: 'Dockerfile app (dockerfile-web, FROM the busybox stack)',
    fixture: 'dockerfile-web',
    app: 'bench-deploy-dockerfile',
    page: 'index.html',
    dockerfile: (dir) => readFileSync(join(dir, 'Dockerfile'), 'utf8'),
    command: () => [],
  },
];

/** `docker build` with the Dockerfile on stdin (the context holds only the app's files), classic builder like the emulator's. */
function dockerBuild(dir: string, dockerfile: string, tag: string): Promise<void> {
  return new Promise((ok, fail) => {
    const p = spawn('docker', ['build', '-q', '--label', RAW_LABEL, '-t', tag, '-f', '-', dir], {
      env: { ...process.env, DOCKER_BUILDKIT: '0' },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('error', fail);
    p.on('close', (code) => (code === 0 ? ok() : fail(new Error(`docker build exited ${code}: ${err}`))));
    p.stdin.end(dockerfile);
  });
}

/**
 * Issue 16, deploy: POST /deployments (an archive) until the router serves the new version, against
 * a raw `docker build` + `docker run` of the same code until the container answers, same base image.
 */
export const section: Section = {
  name: 'deploy',
  description:
    'archive deployment → new version served by the router vs raw docker build + run, Procfile and Dockerfile apps (issue 16)',
  async run(ctx: BenchContext): Promise<Result> {
    const tmp = mkdtempSync(join(tmpdir(), 'bench-deploy-'));
    const rounds = ctx.quick ? 1 : ctx.rounds;
    let emu: Child | undefined;
    let client: ApiClient | undefined;
    const appIds = new Map<string, string>();
    const emuMs = new Map<string, number[]>(KINDS.map((k) => [k.key, []]));
    const rawMs = new Map<string, number[]>(KINDS.map((k) => [k.key, []]));
    const rawBuildMs = new Map<string, number[]>(KINDS.map((k) => [k.key, []]));
    const emuBuildMs = new Map<string, number[]>(KINDS.map((k) => [k.key, []]));
    const firstMs = new Map<string, number>();
    try {
      ensureEmulatorBundle(ctx.emulatorDir);
      emu = await spawnEmulator({
        emulatorDir: ctx.emulatorDir,
        dataDir: null,
        bundled: true,
        profileDir: ctx.profileDir,
      });
      const routerPort = routerPortOf(emu);
      client = new ApiClient(emu.api, 4);
      await client.exchange(emu.token!);
      const c = client;

      /** Each deployment starts once the previous one removed its old image, so none queues behind the one before. */
      const settled = async (appId: string) => {
        for (let i = 0; ; i++) {
          const tags = (
            await docker(
              'images',
              '--filter',
              `label=io.scalingo-emulator.app-id=${appId}`,
              '--format',
              '{{.Repository}}:{{.Tag}}',
            )
          )
            .split('\n')
            .filter((t) => t && !t.includes('<none>'));
          if (tags.length <= 1) return;
          if (i > 1200) throw new Error('the previous image of the app was never removed');
          await sleep(50);
        }
      };
      const work = (k: Kind) => join(tmp, k.key);
      const setPage = (k: Kind, marker: string) => writeFileSync(join(work(k), k.page), `${marker} CONTAINER_NAME\n`);

      /** Through the emulator: archive made beforehand (not timed), POST, until the router serves the marker. */
      const viaEmulator = async (k: Kind, marker: string) => {
        setPage(k, marker);
        const archive = await archiveOf(work(k), join(tmp, `${k.key}-${marker}.tar.gz`));
        await settled(appIds.get(k.key)!);
        const { t0, id } = await postDeployment(c, k.app, archive);
        // The deployment's status, polled every 50 ms meanwhile: when it reaches `starting`, the image is built.
        let built = Number.NaN;
        let serving = false;
        const watch = (async () => {
          while (!serving && Number.isNaN(built)) {
            const d = JSON.parse(await c.expect('GET', `/v1/apps/${k.app}/deployments/${id}`, 200)) as {
              deployment: { status: string };
            };
            if (!['queued', 'building', 'pushing'].includes(d.deployment.status)) built = performance.now() - t0;
            else await sleep(50);
          }
        })();
        await untilServed(() => routerPage(routerPort, k.app), marker);
        const total = performance.now() - t0;
        serving = true;
        await watch;
        return { total, built };
      };
      /** Raw: docker build of the same files on the same base, docker run, until the container serves the marker. */
      const viaRaw = async (k: Kind, marker: string) => {
        setPage(k, marker);
        const tag = `scalingo-emulator/bench-deploy-raw:${k.key}-${marker}`;
        const t0 = performance.now();
        await dockerBuild(work(k), k.dockerfile(work(k)), tag);
        const built = performance.now() - t0;
        const id = await runRawWeb({ label: RAW_LABEL, image: tag, container: 'web-1', command: k.command(work(k)) });
        const port = Number((await docker('port', id, '5000')).split('\n')[0].split(':').pop());
        await untilServed(() => directPage(port), marker);
        const total = performance.now() - t0;
        await docker('rm', '-f', id);
        await docker('rmi', '-f', tag);
        return { total, built };
      };

      for (const k of KINDS) {
        cpSync(join(ctx.repoDir, 'fixtures/apps', k.fixture), work(k), { recursive: true });
        appIds.set(
          k.key,
          (JSON.parse(await c.expect('POST', '/v1/apps', 201, { app: { name: k.app } })) as { app: { id: string } }).app
            .id,
        );
        // The first deployment (creates the formation) is a warm-up, reported apart.
        firstMs.set(k.key, (await viaEmulator(k, 'first')).total);
        await untilRunning(c, k.app);
        await viaRaw(k, 'warm-up');
      }
      for (let round = 1; round <= rounds; round++) {
        for (const k of KINDS) {
          // Alternate which goes first, so neither always runs right after the other's clean-up.
          const order = round % 2 ? (['emulator', 'raw'] as const) : (['raw', 'emulator'] as const);
          for (const which of order) {
            if (which === 'emulator') {
              const e = await viaEmulator(k, `round-${round}-emu`);
              emuMs.get(k.key)!.push(e.total);
              emuBuildMs.get(k.key)!.push(e.built);
            } else {
              const r = await viaRaw(k, `round-${round}-raw`);
              rawMs.get(k.key)!.push(r.total);
              rawBuildMs.get(k.key)!.push(r.built);
            }
          }
          ctx.log(
            `deploy: round ${round}/${rounds}: ${k.key}: emulator ${ms(emuMs.get(k.key)!.at(-1)!)} (built ${ms(emuBuildMs.get(k.key)!.at(-1)!)}), raw ${ms(rawMs.get(k.key)!.at(-1)!)} (build ${ms(rawBuildMs.get(k.key)!.at(-1)!)})`,
          );
        }
      }
      const ratio = (k: Kind) => median(emuMs.get(k.key)!) / median(rawMs.get(k.key)!);
      return {
        title: 'Deploy: archive deployment until the router serves it, vs raw docker build + run',
        method:
          `Emulator in a child process (npm start bundle, in memory). Per app kind, the fixture's page is rewritten with a new marker each time; emulator: the files ` +
          `as a local .tar.gz (made beforehand, not timed), POST /v1/apps/:app/deployments {source_url}, timed from the accepted POST until the router ` +
          `(Host: <app>.localhost, polled every 20 ms) serves the new page — a redeployment of a running app (the first deployment, which creates the formation, ` +
          `is a warm-up, shown apart). Each starts once the previous deployment removed its old image. Baseline in the same run: \`docker build\` (CLI, classic ` +
          `builder, DOCKER_BUILDKIT=0, as the emulator's engine API build) of the same files on the same base image — for the Procfile app the Dockerfile the ` +
          `emulator itself builds with (\`FROM ${STACK}\` / \`COPY . /app\` / \`WORKDIR /app\`, on stdin), for the Dockerfile app its own — then \`docker run -d\` ` +
          `(--init, --memory 512m, PORT=5000 published on 127.0.0.1) with the Procfile's web command or the image's CMD, timed until the container serves the ` +
          `new page (polled every 20 ms). Busybox stack: the fixtures need nothing else, and it keeps the build itself small so the emulator's own cost shows. ` +
          `"Image built" is when GET /v1/apps/:app/deployments/:id (polled every 50 ms meanwhile) first shows the deployment past \`building\`/\`pushing\` (archive fetched and extracted, image built); the rest is the containers' start, readiness probe and router switch. One untimed raw warm-up per kind, then ${rounds} round(s), emulator and raw alternating which goes first.`,
        tables: [
          {
            caption: `best / median of ${rounds} round(s)`,
            headers: [
              'app',
              'emulator: POST → router serves it',
              'of which POST → image built',
              'raw: docker build + run → answers',
              'of which docker build',
              'ratio (median)',
              'first deployment (warm-up, 1 run)',
            ],
            rows: KINDS.map((k) => [
              k.label,
              bestMedian(emuMs.get(k.key)!, ms, false),
              bestMedian(emuBuildMs.get(k.key)!, ms, false),
              bestMedian(rawMs.get(k.key)!, ms, false),
              bestMedian(rawBuildMs.get(k.key)!, ms, false),
              `${ratio(k).toFixed(2)}×`,
              ms(firstMs.get(k.key)!),
            ]),
          },
        ],
        targets: KINDS.map((k) => ({
          what: `deploy ${k.key} app vs raw docker build + run`,
          target: `≤ ${MAX_RATIO}×`,
          measured: `${ratio(k).toFixed(2)}× (median)`,
          met: ratio(k) <= MAX_RATIO,
        })),
        notes: [
          "The emulator's time also covers what the raw path does not: extracting the archive, the deployment's records and events, the readiness probe, the router switch and the old container's stop (after the new one answers, so mostly not timed).",
        ],
      };
    } finally {
      for (const k of KINDS) await deleteApp(client, k.app, appIds.get(k.key));
      await client?.close();
      await emu?.stop();
      const ids = (await docker('ps', '-aq', '--filter', `label=${RAW_LABEL}`).catch(() => ''))
        .split('\n')
        .filter(Boolean);
      if (ids.length) await docker('rm', '-f', ...ids).catch(() => undefined);
      const images = (await docker('images', '-q', '--filter', `label=${RAW_LABEL}`).catch(() => ''))
        .split('\n')
        .filter(Boolean);
      if (images.length) await docker('rmi', '-f', ...new Set(images)).catch(() => undefined);
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};
