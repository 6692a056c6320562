import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleBaseline, ensureEmulatorBundle } from './lib/bundle.ts';
import { type Memory, mib, settledMemory } from './lib/proc-memory.ts';
import { type Child, spawnEmulator, spawnScript } from './lib/processes.ts';
import { bestMedian, median } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

export const IDLE_MAX_MIB = 80;

interface IdleTarget {
  label: string;
  start(): Promise<Child>;
  /** Asked once before the settle period, so the reading is of a server that has answered. */
  path: string;
}

/** The servers of the idle reading, by the label their rows carry. */
export const IDLE_TARGET = {
  bareNode: 'bare node:http server (node, bundled)',
  bareHono: 'bare Hono server (node, bundled like the emulator)',
  dataDir: 'emulator, npm start bundle, --data-dir (new dir)',
  inMemory: 'emulator, npm start bundle, --in-memory',
  tsxFloor: 'bare node:http server through tsx (loader floor)',
  tsx: 'emulator, sources through tsx, --in-memory',
} as const;

async function answer(url: string): Promise<void> {
  const res = await fetch(url);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
}

/** How long a reading waits for RSS to stop moving: shorter in a quick run. */
export const settleFor = (ctx: BenchContext) =>
  ctx.quick ? { minMs: 2000, maxMs: 8000 } : { minMs: 5000, maxMs: 20_000 };

/** A maker of new, empty data directories under `tmp` (one per emulator started). */
export function dataDirsIn(tmp: string): () => string {
  let n = 0;
  return () => {
    const d = join(tmp, `data-${++n}`);
    mkdirSync(d);
    return d;
  };
}

/**
 * Idle RSS after start: each server in its own child process, asked one request, then read once its RSS has
 * settled; the servers interleaved in each round. Shared by the memory section and the memory-idle section.
 */
export async function idleRun(
  ctx: BenchContext,
  tmp: string,
  freshDir: () => string,
  settle: { minMs: number; maxMs: number },
  rounds: number,
): Promise<{ rows: string[][]; rss(label: string): number; notes: string[] }> {
  const bareNode = await bundleBaseline(join(ctx.repoDir, 'bench/lib/bare-node-server.ts'), join(tmp, 'bare-node.mjs'));
  const bareHono = await bundleBaseline(join(ctx.repoDir, 'bench/lib/hello-server.ts'), join(tmp, 'bare-hono.mjs'));
  const targets: IdleTarget[] = [
    {
      label: IDLE_TARGET.bareNode,
      path: '/',
      start: () => spawnScript('node', bareNode, { tsx: false, cwd: ctx.repoDir }),
    },
    {
      label: IDLE_TARGET.bareHono,
      path: '/',
      start: () => spawnScript('hello', bareHono, { tsx: false, cwd: ctx.repoDir }),
    },
    {
      label: IDLE_TARGET.dataDir,
      path: '/_emulator/health',
      start: () => spawnEmulator({ emulatorDir: ctx.emulatorDir, dataDir: freshDir(), bundled: true }),
    },
    {
      label: IDLE_TARGET.inMemory,
      path: '/_emulator/health',
      start: () => spawnEmulator({ emulatorDir: ctx.emulatorDir, dataDir: null, bundled: true }),
    },
    {
      label: IDLE_TARGET.tsxFloor,
      path: '/',
      start: () =>
        spawnScript('node', join(ctx.repoDir, 'bench/lib/bare-node-server.ts'), { tsx: true, cwd: ctx.repoDir }),
    },
    {
      label: IDLE_TARGET.tsx,
      path: '/_emulator/health',
      start: () => spawnEmulator({ emulatorDir: ctx.emulatorDir, dataDir: null }),
    },
  ];
  // Quick: the tsx rows (what the loader adds, not the figure of record) are left out.
  if (ctx.quick) targets.splice(4);
  // The bundle's V8 code cache (src/boot/) as every start of a user's but the first finds it: one uncounted start writes it
  // (at its exit) before the measured ones.
  const warm = await spawnEmulator({ emulatorDir: ctx.emulatorDir, dataDir: null, bundled: true });
  try {
    await answer(`${warm.api}/_emulator/health`);
  } finally {
    await warm.stop();
  }
  const notes: string[] = [];
  const idle = new Map<string, Memory[]>(targets.map((t) => [t.label, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const t of targets) {
      const child = await t.start();
      try {
        await answer(`${child.api}${t.path}`);
        const m = await settledMemory(child.proc.pid, settle);
        idle.get(t.label)?.push(m);
        if (!m.stable)
          notes.push(
            `${t.label}, round ${round}: RSS still moving after ${Math.round(m.afterMs)} ms (last reading kept).`,
          );
        ctx.log(`memory: idle round ${round}/${rounds}: ${t.label}: RSS ${mib(m.rssMiB)}, HWM ${mib(m.hwmMiB)}`);
      } finally {
        await child.stop();
      }
    }
  }
  const readings = (label: string) => idle.get(label) ?? [];
  const rows = targets.map((t) => [
    t.label,
    bestMedian(
      readings(t.label).map((m) => m.rssMiB),
      mib,
      false,
    ),
    bestMedian(
      readings(t.label).map((m) => m.hwmMiB),
      mib,
      false,
    ),
  ]);
  return { rows, rss: (label) => median(readings(label).map((m) => m.rssMiB)), notes };
}

/**
 * Issue 25: the memory section's idle reading alone (a few minutes, where the whole memory section runs its
 * 20-container ingest for about ten), for measuring a change of what the emulator holds at start.
 */
export const section: Section = {
  name: 'memory-idle',
  description: 'idle RSS after start only (vs bare Node / Hono): the first part of the memory section (issue 25)',
  async run(ctx: BenchContext): Promise<Result> {
    const tmp = mkdtempSync(join(tmpdir(), 'bench-memory-idle-'));
    const rounds = ctx.quick ? 1 : ctx.rounds;
    const settle = settleFor(ctx);
    try {
      ensureEmulatorBundle(ctx.emulatorDir);
      const idle = await idleRun(ctx, tmp, dataDirsIn(tmp), settle, rounds);
      const emuIdle = idle.rss(IDLE_TARGET.dataDir);
      return {
        title: 'Memory: idle after start',
        method:
          `RSS is VmRSS of the server's process read from /proc/<pid>/status by the driver, once it has stopped moving (two readings 500 ms apart within 0.5 MiB, ` +
          `after ${settle.minMs / 1000} s, at most ${settle.maxMs / 1000} s); VmHWM is the process's peak RSS over its life. Each server started in its own ` +
          `child process, asked one request (/_emulator/health for the emulator), then read; ${rounds} round(s), servers interleaved. Baselines in the same run: a bare ` +
          `node:http server and a bare Hono server (bench/lib/hello-server.ts), both bundled by esbuild and started with plain node, like the emulator's ` +
          `\`npm start\` bundle (dist/main.mjs, with the environment and node options of the start script, after one uncounted start that writes its V8 code cache), the figure the target applies to; the tsx rows show what the TypeScript loader alone adds. ` +
          'The memory section measures the same, then the loaded and fuzzing readings.',
        tables: [
          {
            caption: `Idle after start: best / median of ${rounds} round(s)`,
            headers: ['server', 'RSS', 'VmHWM'],
            rows: idle.rows,
          },
        ],
        targets: [
          {
            what: 'idle RSS after start (npm start bundle, data dir)',
            target: `≤ ${IDLE_MAX_MIB} MiB`,
            measured: `${mib(emuIdle)} (median); bare Hono ${mib(idle.rss(IDLE_TARGET.bareHono))}, bare Node ${mib(idle.rss(IDLE_TARGET.bareNode))}`,
            met: emuIdle <= IDLE_MAX_MIB,
          },
        ],
        notes: idle.notes,
      };
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};
