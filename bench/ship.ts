import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import { buildExe } from '../scripts/build-exe.ts';
import { EMULATOR_IMAGE, ensureEmulatorImage } from '../scripts/emulator-image/build.ts';
import { hostArch } from '../scripts/exe/node-binary.ts';
import { createDockerRuntime } from '../src/runtime/docker-runtime.ts';
import { freePort } from '../test/support/free-port.ts';
import { type Child, spawnEmulator } from './lib/processes.ts';
import { bestMedian, median, ms, sleep } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

// Issue 39: the single executable's start to healthy ÷ `npm start`'s bundle start ≤ 1.2×, and the image's container
// start to healthy ≤ 2 s on this machine.
const MAX_RATIO = 1.2;
const MAX_IMAGE_MS = 2000;

/** From spawn() to the first 200 of GET /_emulator/health. */
async function timeToHealthy(api: string, since: number, what: string): Promise<number> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    try {
      const res = await request(`${api}/_emulator/health`);
      await res.body.text();
      if (res.statusCode === 200) return performance.now() - since;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`${what}: /_emulator/health never answered 200`);
    await sleep(2);
  }
}

/** `docker run` of the image (host network, the engine's socket, in memory) to the first healthy answer. */
async function imageStart(): Promise<number> {
  const port = await freePort();
  const args = ['run', '-d', '--rm', '--network', 'host', '-v', '/var/run/docker.sock:/var/run/docker.sock'];
  const env = [
    `EMULATOR_PORT=${port}`,
    `EMULATOR_ROUTER_PORT=${await freePort()}`,
    `EMULATOR_SSH_PORT=${await freePort()}`,
  ];
  const since = performance.now();
  const id = execFileSync(
    'docker',
    [...args, ...env.flatMap((e) => ['-e', e]), '-e', 'EMULATOR_IN_MEMORY=true', EMULATOR_IMAGE],
    { encoding: 'utf8' },
  ).trim();
  try {
    return await timeToHealthy(`http://127.0.0.1:${port}`, since, 'the image');
  } finally {
    await new Promise((done) => spawn('docker', ['rm', '-f', '-v', id], { stdio: 'ignore' }).once('exit', done));
  }
}

export const section: Section = {
  name: 'ship',
  description: 'the single executable and the container image: start to healthy (issue 39)',
  async run(ctx: BenchContext): Promise<Result> {
    // The bundle `npm start` runs, built from the code being measured (as the startup section does).
    execFileSync(process.execPath, [join(ctx.emulatorDir, 'scripts/build.mjs'), '--force'], { stdio: 'inherit' });
    const arch = hostArch() === 'arm64' ? 'arm64' : 'x64';
    const executable = await buildExe(arch);
    const runtime = createDockerRuntime();
    try {
      await ensureEmulatorImage(runtime, ctx.log);
    } finally {
      await runtime.close();
    }
    const modes: Record<string, () => Promise<number>> = {
      bundle: () => timed(spawnEmulator({ emulatorDir: ctx.emulatorDir, dataDir: null, bundled: true })),
      exe: () => timed(spawnEmulator({ emulatorDir: ctx.emulatorDir, dataDir: null, executable })),
      image: imageStart,
    };
    // One uncounted start each: the executable writes its files out, the bundle and it their V8 code caches.
    for (const start of Object.values(modes)) await start();
    const perRound = ctx.quick ? 2 : 5;
    const times = new Map<string, number[]>(Object.keys(modes).map((k) => [k, []]));
    for (let round = 1; round <= ctx.rounds; round++) {
      const runs = new Map<string, number[]>(Object.keys(modes).map((k) => [k, []]));
      // Interleaved start by start, so a busy moment of the machine falls on every mode.
      for (let i = 0; i < perRound; i++)
        for (const [k, start] of Object.entries(modes)) runs.get(k)?.push(await start());
      for (const [k, r] of runs) times.get(k)?.push(median(r));
      ctx.log(`ship: round ${round}/${ctx.rounds}: ${[...runs].map(([k, r]) => `${k} ${ms(median(r))}`).join(', ')}`);
    }
    const rounds = (k: string) => times.get(k) ?? [];
    const ratio = median(rounds('exe')) / median(rounds('bundle'));
    const size = execFileSync('stat', ['-c', '%s', executable], { encoding: 'utf8' }).trim();
    return {
      title: 'Single executable and container image: start to healthy',
      method:
        'Each start: spawn the command with --port 0 … --in-memory --log-level silent (the bundle as `npm start` runs it, ' +
        'the executable dist/scalingo-emulator-linux-<arch> as it is), read the API URL from its banner, poll GET ' +
        '/_emulator/health every 2 ms until the first 200, time from spawn(). The image: `docker run -d --network host` ' +
        'with the engine socket mounted and EMULATOR_IN_MEMORY=true on free ports, timed from the `docker run` call to ' +
        `the first 200, then \`docker rm -f\`. ${perRound} starts per mode per round, interleaved, ${ctx.rounds} rounds, ` +
        'after one uncounted start of each (the executable writes its files out, the V8 code caches are written).',
      tables: [
        {
          caption: `median of ${perRound} starts per round: best / median of ${ctx.rounds} rounds.`,
          headers: ['mode', 'time to healthy'],
          rows: [
            ['`npm start` (bundle, host Node)', bestMedian(rounds('bundle'), ms, false)],
            [`single executable (${(Number(size) / 1e6).toFixed(0)} MB)`, bestMedian(rounds('exe'), ms, false)],
            [`container image (${EMULATOR_IMAGE})`, bestMedian(rounds('image'), ms, false)],
          ],
        },
      ],
      targets: [
        {
          what: 'executable start to healthy ÷ `npm start` bundle',
          target: `≤ ${MAX_RATIO.toFixed(2)}×`,
          measured: `${ratio.toFixed(2)}× (median ÷ median: ${ms(median(rounds('exe')))} ÷ ${ms(median(rounds('bundle')))})`,
          met: ratio <= MAX_RATIO,
        },
        {
          what: 'image start to healthy',
          target: `≤ ${ms(MAX_IMAGE_MS)}`,
          measured: ms(median(rounds('image'))),
          met: median(rounds('image')) <= MAX_IMAGE_MS,
        },
      ],
    };
  },
};

async function timed(started: Promise<Child>): Promise<number> {
  const child = await started;
  try {
    return await timeToHealthy(child.api, child.spawnedAt, child.kind);
  } finally {
    await child.stop();
  }
}
