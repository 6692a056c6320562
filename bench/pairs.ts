import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withCpu } from './lib/cpu.ts';
import { ApiClient } from './lib/emulator-client.ts';
import { type Child, spawnEmulator, spawnHello } from './lib/processes.ts';
import { bestMedian, int, median, ms, pct, percentile, us } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

const MIN_PAIRS_PER_S = 2000; // issue 2

interface PairFigures {
  pairsPerSec: number;
  pairs: number;
  p50: number;
  p99: number;
  serverCpuUsPerPair?: number | null;
  serverCpuShare?: number | null;
  clientCpuShare?: number;
}

let seq = 0;

/**
 * `workers` loops, each: POST /v1/apps {app:{name}} → 201, then DELETE /v1/apps/<name>?current_name=<name> → 204.
 * Any other status stops the run: a failed pair is never counted as a pair.
 */
async function pairLoop(client: ApiClient, workers: number, durationS: number): Promise<PairFigures> {
  const latencies: number[] = [];
  const t0 = performance.now();
  const end = t0 + durationS * 1000;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < end) {
        const name = `bench-${(seq++).toString(36)}`;
        const s = performance.now();
        await client.expect('POST', '/v1/apps', 201, { app: { name } });
        await client.expect('DELETE', `/v1/apps/${name}?current_name=${name}`, 204);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  return {
    pairsPerSec: latencies.length / elapsed,
    pairs: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

/**
 * Create+delete pairs per second, sequential and with modest concurrency, in memory and with a data
 * directory (SQLite WAL, synchronous=NORMAL). The same loop against bare Hono stubs of the two routes
 * gives the ceiling of the client and HTTP stack on this machine, in the same run.
 */
export const section: Section = {
  name: 'pairs',
  description: 'POST /v1/apps + DELETE /v1/apps/:app pairs per second (issue 2)',
  async run(ctx: BenchContext): Promise<Result> {
    const durationS = ctx.quick ? 2 : 5;
    const warmupS = ctx.quick ? 0.5 : 1;
    const concurrencies = [1, 4];
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-pairs-'));
    const children: Child[] = [];
    const clients: ApiClient[] = [];
    try {
      const mem = await spawnEmulator({ emulatorDir: ctx.emulatorDir, dataDir: null, profileDir: ctx.profileDir });
      children.push(mem);
      const disk = await spawnEmulator({ emulatorDir: ctx.emulatorDir, dataDir, profileDir: ctx.profileDir });
      children.push(disk);
      const hello = await spawnHello(ctx.repoDir);
      children.push(hello);
      // The baseline tree's in-memory emulator, measured right after the measured tree's in each round.
      const base = ctx.baselineDir
        ? await spawnEmulator({ emulatorDir: ctx.baselineDir, dataDir: null, profileDir: ctx.profileDir })
        : null;
      if (base) children.push(base);

      const servers = [
        { key: 'memory', label: 'emulator --in-memory', child: mem },
        ...(base ? [{ key: 'baseline', label: 'baseline tree: emulator --in-memory', child: base }] : []),
        { key: 'disk', label: 'emulator --data-dir (WAL, synchronous=NORMAL)', child: disk },
        { key: 'hello', label: 'bare Hono stubs (ceiling of client + HTTP)', child: hello },
      ];
      const configs: { server: (typeof servers)[number]; workers: number; client: ApiClient }[] = [];
      for (const s of servers) {
        for (const workers of concurrencies) {
          const client = new ApiClient(s.child.api, workers);
          clients.push(client);
          if (s.child.token) await client.exchange(s.child.token);
          configs.push({ server: s, workers, client });
        }
      }

      const runs = new Map<(typeof configs)[number], PairFigures[]>(configs.map((c) => [c, []]));
      for (let round = 1; round <= ctx.rounds; round++) {
        // Every other round in reverse order: on a busy machine the configuration measured first in a round was seen
        // paying more, which a fixed order would give to the same server every round.
        for (const c of round % 2 ? configs : [...configs].reverse()) {
          ctx.log(
            `pairs: round ${round}/${ctx.rounds}, ${c.server.key} × ${c.workers}: ${warmupS} s warm-up + ${durationS} s`,
          );
          await pairLoop(c.client, c.workers, warmupS);
          const m = await withCpu(c.server.child.proc.pid, () => pairLoop(c.client, c.workers, durationS));
          const f: PairFigures = {
            ...m.value,
            serverCpuUsPerPair: m.serverCpuMs === null ? null : (m.serverCpuMs * 1000) / m.value.pairs,
            serverCpuShare: m.serverCpuMs === null ? null : m.serverCpuMs / m.wallMs,
            clientCpuShare: m.clientCpuMs / m.wallMs,
          };
          ctx.log(
            `      ${int(f.pairsPerSec)} pairs/s, pair p50 ${ms(f.p50)}, p99 ${ms(f.p99)}, server CPU ${us(f.serverCpuUsPerPair ?? null)}/pair (${pct(f.serverCpuShare ?? NaN)} of a core), client ${pct(f.clientCpuShare ?? NaN)}`,
          );
          runs.get(c)!.push(f);
        }
      }

      const rows = configs.map((c) => {
        const fs = runs.get(c)!;
        return [
          c.server.label,
          String(c.workers),
          bestMedian(
            fs.map((f) => f.pairsPerSec),
            int,
            true,
          ),
          bestMedian(
            fs.map((f) => f.p50),
            ms,
            false,
          ),
          bestMedian(
            fs.map((f) => f.p99),
            ms,
            false,
          ),
          bestMedian(
            fs.map((f) => f.serverCpuUsPerPair ?? NaN),
            us,
            false,
          ),
          pct(median(fs.map((f) => f.serverCpuShare ?? NaN))),
          pct(median(fs.map((f) => f.clientCpuShare ?? NaN))),
          int(fs.reduce((a, f) => a + f.pairs, 0)),
        ];
      });
      const emulatorConfigs = configs.filter((c) => c.server.key !== 'hello' && c.server.key !== 'baseline');
      const medianOf = (c: (typeof configs)[number]) => median(runs.get(c)!.map((f) => f.pairsPerSec));
      const bestConfig = emulatorConfigs.reduce((a, b) => (medianOf(b) > medianOf(a) ? b : a));
      const seqMem = emulatorConfigs.find((c) => c.server.key === 'memory' && c.workers === 1)!;
      return {
        title: 'Create+delete pairs per second',
        method:
          `undici Pool (keep-alive, one connection per worker) in the driver process; each worker loops POST /v1/apps → 201 then ` +
          `DELETE /v1/apps/<name>?current_name=<name> → 204 with a Bearer; a pair counts only when both answered as expected (any other status aborts the run). ` +
          `${warmupS} s warm-up then ${durationS} s measured per configuration; ${ctx.rounds} rounds, configurations interleaved (in reverse order every other round); one emulator per mode ` +
          `for the whole section (its events table grows by 2 rows a pair, as it would in use).`,
        tables: [
          ...(base ? [baselineTable(configs, runs)] : []),
          {
            caption: `Each cell: best / median of ${ctx.rounds} rounds (server and client CPU in % of one core: median). Pair latency = POST + DELETE as seen by the client. Server CPU = the server process's user+system time (/proc) over the run; a server well under 100 % of a core while pairs are slow is waiting on something (Docker, disk), not computing.`,
            headers: [
              'server',
              'workers',
              'pairs/s',
              'pair p50',
              'pair p99',
              'server CPU / pair',
              'server CPU',
              'client CPU',
              'pairs',
            ],
            rows,
          },
        ],
        targets: [
          {
            what: 'create+delete pairs/s, sequential, in memory',
            target: `≥ ${int(MIN_PAIRS_PER_S)}`,
            measured: `${int(medianOf(seqMem))} (median)`,
            met: medianOf(seqMem) >= MIN_PAIRS_PER_S,
          },
          {
            what: `create+delete pairs/s, best configuration (${bestConfig.server.key} × ${bestConfig.workers})`,
            target: `≥ ${int(MIN_PAIRS_PER_S)}`,
            measured: `${int(medianOf(bestConfig))} (median)`,
            met: medianOf(bestConfig) >= MIN_PAIRS_PER_S,
          },
        ],
      };
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await Promise.all(children.map((c) => c.stop()));
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

type Config = { server: { key: string; label: string }; workers: number };

/** The measured tree against the baseline tree (`--baseline-dir`), configuration by configuration: medians and their ratio. */
function baselineTable<C extends Config>(configs: C[], runs: Map<C, PairFigures[]>) {
  const med = (c: C, f: (x: PairFigures) => number) => median(runs.get(c)!.map(f));
  const cpu = (x: PairFigures) => x.serverCpuUsPerPair ?? NaN;
  const rows = configs
    .filter((c) => c.server.key === 'memory')
    .flatMap((c) => {
      const b = configs.find((o) => o.server.key === 'baseline' && o.workers === c.workers);
      if (!b) return [];
      return [
        [
          `in memory × ${c.workers}`,
          `${int(med(c, (x) => x.pairsPerSec))} / ${int(med(b, (x) => x.pairsPerSec))}`,
          `${us(med(c, cpu))} / ${us(med(b, cpu))}`,
          `${((med(c, cpu) / med(b, cpu)) * 100).toFixed(1)} %`,
        ],
      ];
    });
  return {
    caption:
      'This tree against the baseline tree, both started in this run, their rounds interleaved: medians of the rounds (this tree / baseline).',
    headers: ['configuration', 'pairs/s', 'server CPU / pair', 'CPU a pair: this tree ÷ baseline'],
    rows,
  };
}
