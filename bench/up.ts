import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { up } from '../src/cli/up/up.ts';
import { ADDON_KINDS } from '../src/modules/addons/addon-kinds.ts';
import { createDockerRuntime } from '../src/runtime/docker-runtime.ts';
import { directPage, docker, routerPage, untilServed } from './lib/app-deploy.ts';
import { nodeBaseImage } from './lib/node-image.ts';
import { bestMedian, median, ms } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

// Issue 21: `up` of fixtures/apps/node-pg-redis against the same work done by hand with docker.
// - First up: from nothing (fresh npm cache, no image of the app, no addon server) until the router
//   serves the app, against `npm ci` on the host + a network, a PostgreSQL and a Redis server from
//   the same images + `docker build` + `docker run` until the app answers.
// - Inner loop: one edit of server.js until the new version is served, against a cached `docker
//   build` + `docker run` of the same change.
const MAX_RATIO = 1.5;
const LABEL = 'io.scalingo-emulator.bench=up-raw';
const FIXTURE = join(import.meta.dirname, '../fixtures/apps/node-pg-redis');
const MANIFEST = { addons: ['postgresql:postgresql-sandbox', 'redis:redis-sandbox'] };

function run(cmd: string, args: string[], opts: { cwd?: string; input?: string } = {}): Promise<void> {
  return new Promise((ok, fail) => {
    const p = spawn(cmd, args, {
      cwd: opts.cwd,
      env: { ...process.env, DOCKER_BUILDKIT: '0' },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('error', fail);
    p.on('close', (code) =>
      code === 0 ? ok() : fail(new Error(`${cmd} ${args[0]} exited ${code}: ${err.slice(-500)}`)),
    );
    p.stdin.end(opts.input ?? '');
  });
}

const mark = (dir: string, marker: string) => {
  const file = join(dir, 'server.js');
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace(
      /notes: rows\.map\(\(r\) => r\.text\), hits(, marker: '[^']*')?/,
      `notes: rows.map((r) => r.text), hits, marker: '${marker}'`,
    ),
  );
};

/** By hand: the network, both servers (waiting until they answer), the image, the app's container. */
async function rawFromScratch(
  dir: string,
  tag: string,
  net: string,
  base: string,
): Promise<{ ms: number; env: string[] }> {
  const t0 = performance.now();
  await run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--cache', `${dir}-npm-cache`], { cwd: dir });
  await docker('network', 'create', '--label', LABEL, net);
  const env: string[] = [];
  for (const kind of ['postgresql', 'redis'] as const) {
    const spec = ADDON_KINDS[kind];
    const name = `${net}-${kind}`;
    const creds = ['-e', 'ADDON_USER=bench', '-e', 'ADDON_PASSWORD=benchpassword123', '-e', 'ADDON_DATABASE=bench'];
    // An anonymous volume at the data directory, as the emulator binds a named one there.
    await docker(
      'run',
      '-d',
      '--label',
      LABEL,
      '--name',
      name,
      '--network',
      net,
      '--network-alias',
      kind,
      '-v',
      spec.dataDir,
      ...creds,
      `scalingo-emulator/addon-${kind}:1`,
      'sh',
      '-c',
      spec.script(256 * 1024 * 1024),
    );
    const deadline = performance.now() + 120_000;
    for (;;) {
      const ok = await docker('exec', ...creds, name, ...spec.ready).then(
        () => true,
        () => false,
      );
      if (ok) break;
      if ((await docker('inspect', '-f', '{{.State.Running}}', name)) !== 'true' || performance.now() > deadline)
        throw new Error(`${kind} did not start: ${await docker('logs', '--tail', '5', name).catch(() => '')}`);
    }
    env.push(
      '-e',
      `${kind === 'postgresql' ? 'DATABASE_URL' : 'REDIS_URL'}=${spec.url({ username: 'bench', password: 'benchpassword123', database: 'bench' }, kind, spec.port)}`,
    );
  }
  const elapsed = await rawBuildRun(dir, tag, net, env, 'v0', base);
  return { ms: performance.now() - t0 - elapsed.afterServed, env };
}

/** docker build (the Dockerfile a developer would write: node_modules installed on the host) + run + first answer. */
async function rawBuildRun(
  dir: string,
  tag: string,
  net: string,
  env: string[],
  marker: string,
  base: string,
): Promise<{ ms: number; afterServed: number }> {
  const t0 = performance.now();
  await run('docker', ['build', '-q', '--label', LABEL, '-t', tag, '-f', '-', dir], {
    input: `FROM ${base}\nCOPY . /app\nWORKDIR /app\nCMD ["node", "server.js"]\n`,
  });
  const id = await docker(
    'run',
    '-d',
    '--label',
    LABEL,
    '--network',
    net,
    ...env,
    '-e',
    'PORT=5000',
    '-p',
    '127.0.0.1::5000',
    tag,
  );
  const port = Number((await docker('port', id, '5000')).split(':').pop());
  await untilServed(() => directPage(port), marker, 120_000);
  const total = performance.now() - t0;
  const t1 = performance.now();
  await docker('rm', '-f', id);
  return { ms: total, afterServed: performance.now() - t1 };
}

export const section: Section = {
  name: 'up',
  description:
    '`up` of node-pg-redis from nothing, and a one-file change served again, vs the same by hand with docker (issue 21)',
  async run(ctx: BenchContext): Promise<Result> {
    const rounds = ctx.quick ? 1 : Math.min(ctx.rounds, 3);
    const loads: string[] = [];
    const firstUp: number[] = [];
    const firstRaw: number[] = [];
    const loopUp: number[] = [];
    const loopRaw: number[] = [];
    // The hand-written Dockerfile starts from the image with the Node.js the app gets (made once, before the rounds).
    const runtime = createDockerRuntime();
    const base = await nodeBaseImage(ctx.repoDir, runtime, FIXTURE).finally(() => runtime.close());
    for (let r = 0; r < rounds; r++) {
      const tmp = mkdtempSync(join(tmpdir(), 'bench-up-'));
      const net = `bench-up-raw-${process.pid}-${r}`;
      const rawDir = join(tmp, 'raw');
      const upDir = join(tmp, 'notes-bench');
      cpSync(FIXTURE, rawDir, { recursive: true });
      cpSync(FIXTURE, upDir, { recursive: true });
      writeFileSync(join(upDir, 'scalingo.json'), JSON.stringify(MANIFEST));
      mark(rawDir, 'v0');
      mark(upDir, 'v0');
      let handle: Awaited<ReturnType<typeof up>> | undefined;
      const loadAt = () => loadavg()[0].toFixed(1);
      const loadBefore = loadAt();
      try {
        const raw = await rawFromScratch(rawDir, `bench-up-raw:${r}`, net, base);
        firstRaw.push(raw.ms);
        ctx.log(`  by hand from scratch: ${ms(raw.ms)}`);
        for (let i = 1; i <= 3; i++) {
          mark(rawDir, `raw${i}`);
          loopRaw.push((await rawBuildRun(rawDir, `bench-up-raw:${r}`, net, raw.env, `raw${i}`, base)).ms);
        }

        const t0 = performance.now();
        handle = await up({
          dir: upDir,
          inMemory: true,
          port: 0,
          routerPort: 0,
          sshPort: 0,
          out: new PassThrough().resume(),
          logs: false,
          debounceMs: 100,
        });
        const port = Number(new URL(handle.url).port);
        const app = handle.app;
        await untilServed(() => routerPage(port, app), 'v0', 120_000);
        firstUp.push(performance.now() - t0);
        ctx.log(`  up from scratch: ${ms(firstUp.at(-1) ?? 0)}`);
        for (let i = 1; i <= 3; i++) {
          const t1 = performance.now();
          mark(upDir, `up${i}`);
          await untilServed(() => routerPage(port, app), `up${i}`, 120_000);
          loopUp.push(performance.now() - t1);
        }
        loads.push(`${loadBefore}→${loadAt()}`);
        ctx.log(
          `  round ${r + 1}: by hand ${ms(firstRaw.at(-1) ?? 0)}, up ${ms(firstUp.at(-1) ?? 0)}, load average ${loads.at(-1)}`,
        );
      } finally {
        await handle?.stop().catch(() => undefined);
        for (const id of (await docker('ps', '-aq', '--filter', `label=${LABEL}`)).split('\n').filter(Boolean))
          await docker('rm', '-f', '-v', id).catch(() => undefined);
        await docker('network', 'rm', net).catch(() => undefined);
        await docker('rmi', '-f', `bench-up-raw:${r}`).catch(() => undefined);
        rmSync(tmp, { recursive: true, force: true });
      }
    }
    const firstRatio = median(firstUp) / median(firstRaw);
    const loopRatio = median(loopUp) / median(loopRaw);
    return {
      title: '`up`: first run and inner loop of node-pg-redis (issue 21)',
      method:
        'First run: `up()` on a fresh copy of fixtures/apps/node-pg-redis with a scalingo.json naming postgresql and redis (in memory: empty npm cache, no image, no addon server) until the router serves the app; by hand: `npm ci` on the host with an empty cache, a Docker network, the same PostgreSQL and Redis images started with the same scripts (waiting until each answers), `docker build` (FROM the node stack, COPY) and `docker run` until the app answers. The addon servers start while the code builds (the deployment waits for them before starting the app containers). Rounds run by hand first, then `up`, each with the same load around it. Inner loop: an edit of server.js until the new answer is served (watcher, archive, build, new container, router), against a cached `docker build` + `docker run` of the same change until the new container answers. Medians.',
      tables: [
        {
          headers: ['measure', 'up', 'by hand', 'ratio'],
          rows: [
            [
              'first run, from nothing',
              bestMedian(firstUp, ms, false),
              bestMedian(firstRaw, ms, false),
              firstRatio.toFixed(2),
            ],
            [
              'one-file change served again',
              bestMedian(loopUp, ms, false),
              bestMedian(loopRaw, ms, false),
              loopRatio.toFixed(2),
            ],
            [
              'first run, per round (by hand / up)',
              firstRaw.map((v, i) => `${ms(v)} / ${ms(firstUp[i] ?? 0)}`).join('; '),
              '',
              '',
            ],
            ['load average (1 min), start→end of each round', loads.join('; '), '', ''],
          ],
        },
      ],
      targets: [
        {
          what: 'first `up` of node-pg-redis ÷ the same from scratch by hand',
          target: `≤ ${MAX_RATIO}×`,
          measured: `${firstRatio.toFixed(2)}×`,
          met: firstRatio <= MAX_RATIO,
        },
        {
          what: 'one-file change served again ÷ cached docker build + run',
          target: `≤ ${MAX_RATIO}×`,
          measured: `${loopRatio.toFixed(2)}×`,
          met: loopRatio <= MAX_RATIO,
        },
      ],
    };
  },
};
