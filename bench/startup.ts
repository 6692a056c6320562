import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { type Child, spawnEmulator, spawnHello } from './lib/processes.ts';
import { bestMedian, median, min, ms, sleep } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

// Issue 16: `npm start` (the bundle) to a healthy answer ≤ 1.2× the bare Hono server's start, both
// measured here in the same rounds (issue 2 had ≤ 400 ms).
const MAX_RATIO = 1.2;
const RUNS_PER_ROUND = 5;

interface Mode {
  key: string;
  label: string;
  /** Spawns the server; `path` is what answers 200 once it is healthy. */
  start(ctx: BenchContext): Promise<Child>;
  path: string;
}

/** CPU time the process's main thread has run (Linux's schedstat), in ms: what a start costs, whatever else the machine runs. */
function mainThreadCpuMs(pid: number | undefined): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/** Polls until the first 200; the clock runs from spawn(), so process start, module loading and migrations all count. */
async function timeToHealthy(child: Child, path: string): Promise<{ ms: number; cpuMs: number; status: string }> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    try {
      const res = await request(`${child.api}${path}`, { headers: { accept: 'application/json' } });
      const text = await res.body.text();
      if (res.statusCode === 200) {
        const t = performance.now() - child.spawnedAt;
        const cpuMs = mainThreadCpuMs(child.proc.pid);
        const status = path === '/' ? 'n/a' : String((JSON.parse(text) as { status?: string }).status);
        return { ms: t, cpuMs, status };
      }
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`${child.kind}: ${path} never answered 200`);
    await sleep(2);
  }
}

/**
 * The floor of any Node server: node:http answering "ok", started by plain `node -e` (no tsx, no
 * module graph). Not the target's baseline (that is the bare Hono server, as the issue measured it):
 * it shows what is left to Node itself.
 */
function spawnPlainNode(): Promise<Child> {
  const script =
    "require('http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { console.log('listening http://127.0.0.1:' + this.address().port); }); process.on('SIGTERM', () => process.exit(0));";
  const spawnedAt = performance.now();
  const proc = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  return new Promise((ok, fail) => {
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const api = /listening (http:\/\/\S+)/.exec(out)?.[1];
      if (!api) return;
      ok({
        kind: 'hello',
        api,
        token: null,
        readyMs: performance.now() - spawnedAt,
        spawnedAt,
        proc,
        output: () => out,
        errors: () => '',
        stop: () =>
          new Promise<void>((done) =>
            proc.exitCode !== null ? done() : (proc.once('exit', () => done()), proc.kill('SIGTERM')),
          ),
      });
    });
    proc.once('exit', (code) => fail(new Error(`plain node server exited (${code}) before it listened`)));
  });
}

/**
 * Cold start to healthy: spawn with --port 0, read the printed API URL, poll GET /_emulator/health
 * until the first 200. The bare Hono server, started the same way, is the floor (Node + tsx).
 */
export const section: Section = {
  name: 'startup',
  description: 'cold start to a healthy /_emulator/health, in memory and with a data dir (issue 2)',
  async run(ctx: BenchContext): Promise<Result> {
    // The bundle `npm start` runs, built from the code being measured.
    for (const dir of [ctx.emulatorDir, ...(ctx.baselineDir ? [ctx.baselineDir] : [])])
      execFileSync(process.execPath, [join(dir, 'scripts/build.mjs'), '--force'], { stdio: 'inherit' });
    const root = mkdtempSync(join(tmpdir(), 'bench-startup-'));
    let n = 0;
    const existing = join(root, 'existing');
    const modes: Mode[] = [
      {
        key: 'hello',
        label: 'bare Hono hello world (`node --import tsx`, the baseline)',
        path: '/',
        start: (c) => spawnHello(c.repoDir),
      },
      {
        key: 'plain',
        label: 'plain node:http server (`node -e`, no module graph)',
        path: '/',
        start: () => spawnPlainNode(),
      },
      {
        key: 'bundle',
        label: 'npm start (bundle) --in-memory',
        path: '/_emulator/health',
        start: (c) =>
          spawnEmulator({ emulatorDir: c.emulatorDir, dataDir: null, profileDir: c.profileDir, bundled: true }),
      },
      {
        key: 'fresh',
        label: 'npm start (bundle) --data-dir, new empty dir',
        path: '/_emulator/health',
        start: (c) =>
          spawnEmulator({
            emulatorDir: c.emulatorDir,
            dataDir: join(root, `fresh-${n++}`),
            profileDir: c.profileDir,
            bundled: true,
          }),
      },
      {
        key: 'existing',
        label: 'npm start (bundle) --data-dir, existing dir',
        path: '/_emulator/health',
        start: (c) =>
          spawnEmulator({ emulatorDir: c.emulatorDir, dataDir: existing, profileDir: c.profileDir, bundled: true }),
      },
      ...(ctx.baselineDir
        ? [
            {
              key: 'baseline',
              label: `npm start (bundle) --in-memory, baseline tree (\`--baseline-dir\`)`,
              path: '/_emulator/health',
              start: (c: BenchContext) =>
                spawnEmulator({
                  emulatorDir: c.baselineDir ?? '',
                  dataDir: null,
                  profileDir: c.profileDir,
                  bundled: true,
                }),
            },
          ]
        : []),
      {
        key: 'memory',
        label: 'sources through tsx (`npm run dev`) --in-memory',
        path: '/_emulator/health',
        start: (c) => spawnEmulator({ emulatorDir: c.emulatorDir, dataDir: null, profileDir: c.profileDir }),
      },
    ];
    const perRound = ctx.quick ? 2 : RUNS_PER_ROUND;
    try {
      // The "existing" dir is made by one start that is not counted; so are one start of each mode (tsx's cache, disk cache).
      for (const m of modes) {
        const c = await m.start(ctx);
        await timeToHealthy(c, m.path);
        await c.stop();
      }
      const times = new Map<string, number[][]>(modes.map((m) => [m.key, []]));
      const cpu = new Map<string, number[][]>(modes.map((m) => [m.key, []]));
      const selfReported: number[] = [];
      const statuses = new Set<string>();
      for (let round = 1; round <= ctx.rounds; round++) {
        for (const m of modes) {
          times.get(m.key)!.push([]);
          cpu.get(m.key)!.push([]);
        }
        // Modes interleaved run by run, so a busy moment on the machine falls on all of them.
        for (let i = 0; i < perRound; i++) {
          for (const m of modes) {
            const child = await m.start(ctx);
            try {
              const r = await timeToHealthy(child, m.path);
              times.get(m.key)![round - 1].push(r.ms);
              cpu.get(m.key)![round - 1].push(r.cpuMs);
              if (m.path !== '/') statuses.add(r.status);
              const self = /ready in (\d+) ms/.exec(child.output())?.[1];
              if (m.key === 'bundle' && self) selfReported.push(Number(self));
            } finally {
              await child.stop();
            }
          }
        }
        ctx.log(
          `startup: round ${round}/${ctx.rounds}: ${modes.map((m) => `${m.key} ${ms(median(times.get(m.key)![round - 1]))}`).join(', ')}`,
        );
      }
      const roundMedians = (k: string) => times.get(k)!.map(median);
      const cpuRoundMedians = (k: string) => cpu.get(k)!.map(median);
      const cpuCell = (k: string) =>
        cpuRoundMedians(k).some(Number.isNaN) ? 'n/a' : bestMedian(cpuRoundMedians(k), ms, false);
      const all = (k: string) => times.get(k)!.flat();
      const memMedian = median(roundMedians('bundle'));
      const helloMedian = median(roundMedians('hello'));
      const ratio = memMedian / helloMedian;
      const bestRatio = Math.min(...roundMedians('bundle')) / Math.min(...roundMedians('hello'));
      return {
        title: 'Cold start to healthy',
        method:
          `Each start: spawn \`node <options> dist/main.mjs start --port 0 --router-port 0 … --log-level silent\` (the bundle \`npm start\` runs, built beforehand by scripts/build.mjs, with the environment and node options of its start script) or the same through \`node --import tsx src/main.ts\`, read the API URL from its banner, ` +
          `poll GET /_emulator/health every 2 ms until the first 200; the time runs from spawn() to that 200; the main thread's CPU time is read (/proc/<pid>/task/<pid>/schedstat) when that 200 arrives: it moves much less than the time with the machine's load. ` +
          `${perRound} starts per mode per round, modes interleaved, ${ctx.rounds} rounds, after one uncounted start of each mode (which, for a bundle with one, writes its V8 code cache: src/boot/). ` +
          `The tsx transform cache is warm. Health answered status: ${[...statuses].join(', ')} (Docker probed for real: GET /version on the engine's socket).`,
        tables: [
          {
            caption: `median of ${perRound} starts per round: best / median of ${ctx.rounds} rounds; fastest single start.`,
            headers: ['mode', 'time to healthy', 'fastest start', 'main-thread CPU to healthy'],
            rows: modes.map((m) => [
              m.label,
              bestMedian(roundMedians(m.key), ms, false),
              ms(min(all(m.key))),
              cpuCell(m.key),
            ]),
          },
        ],
        targets: [
          {
            what: 'cold start to healthy, `npm start` --in-memory ÷ bare Hono server',
            target: `≤ ${MAX_RATIO.toFixed(2)}×`,
            measured: `${ratio.toFixed(2)}× (median ÷ median: ${ms(memMedian)} ÷ ${ms(helloMedian)}); best ÷ best ${bestRatio.toFixed(2)}×`,
            met: ratio <= MAX_RATIO,
          },
        ],
        notes: [
          ...(ctx.baselineDir
            ? [
                `This tree ÷ the baseline tree, \`npm start\` --in-memory, median ÷ median: time to healthy ${(memMedian / median(roundMedians('baseline'))).toFixed(2)}×, main-thread CPU ${(median(cpuRoundMedians('bundle')) / median(cpuRoundMedians('baseline'))).toFixed(2)}×.`,
              ]
            : []),
          `Against the plain node:http floor: ${(memMedian / median(roundMedians('plain'))).toFixed(2)}× (median ÷ median).`,
          ...(selfReported.length
            ? [
                `The emulator's own "ready in N ms" (config load → listening, module loading excluded), bundle: median ${ms(median(selfReported))}.`,
              ]
            : []),
        ],
      };
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
};
