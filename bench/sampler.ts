import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { c as tarCreate } from 'tar';
import { processCpuMs, processProbe } from './lib/cpu.ts';
import { ApiClient } from './lib/emulator-client.ts';
import { type Child, spawnEmulator } from './lib/processes.ts';
import { bestMedian, max, median, min, ms, pct as pct1, sleep, us } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

const run = promisify(execFile);
const docker = async (...args: string[]) => (await run('docker', args)).stdout.trim();

// The platform allows at most 10 containers of a type: 20 web containers take two apps of 10.
const APPS = ['bench-sampler-a', 'bench-sampler-b'];
const PER_APP = 10;
const CONTAINERS = APPS.length * PER_APP;
const SIZE = 'S';
const MAX_SHARE = 0.03; // issue 6: ≤ 3 % of one core with 20 containers
const DEFAULT_INTERVAL = 60_000; // intervals.statsSampleMs's default, the platform's granularity
const SHORT_INTERVALS = [5_000, 1_000];
// "Off": one day never ticks within a phase, and stays under setInterval's 2^31-1 ms ceiling (above it Node uses 1 ms).
const OFF_INTERVAL = 86_400_000;
// After the banner, an idle emulator still works for ~35 s: reconciliation with Docker, the logs collector, then
// V8's memory reducer — full GCs ("Mark-Compact (reduce)", --trace-gc) at ~16 s and ~17 s in the main thread and
// ~33 s in tsx's loader thread, ~130 ms of CPU in all. Measuring starts after them, in every phase alike.
const SETTLE_MS = 40_000;
const POLL_MS = 10;
const ENGINE_EVERY = 5; // engine processes are read every 5th poll (they have many threads; rounds last seconds)
// Work after a round's rows are committed that still belongs to it (the alert engine's evaluation).
const AFTER_ROUND_MS = 30;
// A round starts with one list and 20 concurrent inspects: that many new sockets to the engine at once.
const FD_JUMP = 6;

// ---------------------------------------------------------------------------------------------------------
// /proc readers. `docker stats` work is done by dockerd, containerd and each container's shim.

interface EnginePids {
  dockerd: number[];
  containerd: number[];
  shims: number[];
}
type EngineCpu = Record<keyof EnginePids, number | null>;

/** dockerd, containerd and the shims of the given containers (full ids), as this PID namespace sees them. */
function enginePids(containerIds: string[]): EnginePids {
  const ids = new Set(containerIds);
  const out: EnginePids = { dockerd: [], containerd: [], shims: [] };
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const comm = readFileSync(`/proc/${d}/comm`, 'utf8').trim();
      if (comm === 'dockerd') out.dockerd.push(Number(d));
      else if (comm === 'containerd') out.containerd.push(Number(d));
      else if (comm.startsWith('containerd-shim')) {
        const argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
        if (ids.has(argv[argv.indexOf('-id') + 1])) out.shims.push(Number(d));
      }
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** user + system ms (clock ticks) of each group of engine processes. */
function engineCpu(p: EnginePids): EngineCpu {
  const sum = (pids: number[]) => {
    let total = 0;
    for (const pid of pids) {
      const c = processCpuMs(pid);
      if (c === null) return null;
      total += c;
    }
    return pids.length ? total : null;
  };
  return { dockerd: sum(p.dockerd), containerd: sum(p.containerd), shims: sum(p.shims) };
}

const minus = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);
const engineDelta = (a: EngineCpu, b: EngineCpu): EngineCpu => ({
  dockerd: minus(b.dockerd, a.dockerd),
  containerd: minus(b.containerd, a.containerd),
  shims: minus(b.shims, a.shims),
});
/** containerd + shims, the engine's work besides dockerd. */
const rest = (e: EngineCpu) => (e.containerd === null || e.shims === null ? null : e.containerd + e.shims);

// ---------------------------------------------------------------------------------------------------------

interface Round {
  /** The rows' `time`: the emulator's clock once every stats read of the round returned. */
  end: number;
  rows: number;
  detectedAt: number;
  /** From the round's first requests to the engine (a jump in open sockets) to its rows' time; null: not found. */
  wallMs: number | null;
  /** Emulator CPU (all threads) from just before its first request to just after its commit, and that span. */
  cpuMs: number | null;
  spanMs: number | null;
  /** Engine CPU over about the same span (read every 50 ms), and that span. */
  engine: EngineCpu | null;
  engineSpanMs: number | null;
}

interface Phase {
  intervalMs: number | null;
  /** Window start: when the round before it was seen stored (sampling off: after the settling time). */
  t0: number;
  wallMs: number;
  /** user + system from /proc/<pid>/stat over the window. */
  emuCpuMs: number;
  /** Same window, from schedstat (exact), for the baseline subtracted from in-round figures. */
  emuRunMs: number;
  engine: EngineCpu;
  rounds: Round[];
  /** Fewest points answered by GET /v1/apps/:app/stats/cpu/web?since=1 (each app) after the window. */
  points: number | null;
}

interface Setup {
  tmp: string;
  dataDir: string;
  appIds: string[];
  instance: string;
  containerIds: string[];
}

/** Config file for one phase: only the sampling interval differs between phases. */
function configFile(tmp: string, intervalMs: number): string {
  const file = join(tmp, `config-${intervalMs}.json`);
  writeFileSync(file, JSON.stringify({ intervals: { statsSampleMs: intervalMs } }));
  return file;
}

async function startEmulator(
  ctx: BenchContext,
  s: Setup,
  intervalMs: number,
): Promise<{ emu: Child; client: ApiClient }> {
  const emu = await spawnEmulator({
    emulatorDir: ctx.emulatorDir,
    dataDir: s.dataDir,
    profileDir: ctx.profileDir,
    env: { EMULATOR_CONFIG: configFile(s.tmp, intervalMs) },
  });
  const client = new ApiClient(emu.api, 2);
  await client.exchange(emu.token!);
  return { emu, client };
}

/** Running containers of the bench's apps (of one emulator instance, when known), full ids. */
async function appContainers(instance: string | null): Promise<string[]> {
  const ids: string[] = [];
  for (const app of APPS) {
    const filters = [
      '--filter',
      `label=io.scalingo-emulator.app-name=${app}`,
      ...(instance ? ['--filter', `label=io.scalingo-emulator.instance=${instance}`] : []),
    ];
    ids.push(...(await docker('ps', '-q', '--no-trunc', ...filters)).split('\n').filter(Boolean));
  }
  return ids.sort();
}

/** POST /scale, then the operation until done. */
async function scale(client: ApiClient, app: string, amount: number): Promise<void> {
  if ((await client.scale(app, [{ name: 'web', amount, size: SIZE }])) !== 'done')
    throw new Error(`scale ${app} to ${amount}: nothing to change`);
}

/**
 * Deploys the busybox-web fixture to each app and scales web to 10 × S, sampling off; the containers outlive
 * the emulator. Fills `s` as it goes, so the clean-up knows what was made even when this fails half-way.
 */
async function setUp(ctx: BenchContext, s: Setup): Promise<void> {
  const { emu, client } = await startEmulator(ctx, s, OFF_INTERVAL);
  try {
    const archive = join(s.tmp, 'app.tar.gz');
    await tarCreate({ gzip: true, file: archive, cwd: join(ctx.repoDir, 'fixtures/apps') }, ['busybox-web']);
    await Promise.all(
      APPS.map(async (app) => {
        const created = JSON.parse(await client.expect('POST', '/v1/apps', 201, { app: { name: app } })) as {
          app: { id: string };
        };
        s.appIds.push(created.app.id);
        await client.expect('POST', `/v1/apps/${app}/deployments`, 201, { deployment: { source_url: archive } });
        await waitFor(
          async () => {
            const a = JSON.parse(await client.expect('GET', `/v1/apps/${app}`, 200)) as { app: { status: string } };
            return a.app.status === 'running';
          },
          120_000,
          `deployment of ${app} to finish`,
        );
        await scale(client, app, PER_APP);
      }),
    );
    s.containerIds = await appContainers(null);
    if (s.containerIds.length !== CONTAINERS)
      throw new Error(`${s.containerIds.length} running containers in Docker, ${CONTAINERS} expected`);
    s.instance = await docker(
      'inspect',
      '--format',
      '{{index .Config.Labels "io.scalingo-emulator.instance"}}',
      s.containerIds[0],
    );
  } finally {
    await client.close();
    await emu.stop();
  }
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

interface Tick {
  t: number;
  cpuNs: number;
  fds: number;
  engine?: EngineCpu;
}

/**
 * One emulator run on the shared data dir with `statsSampleMs = intervalMs` (null: off). With sampling on,
 * the window opens as a round's rows appear and closes as the first round ending past `windowMs` (less half
 * an interval) appears, so it holds whole rounds only; rounds are found by reading the database file.
 */
async function measurePhase(ctx: BenchContext, s: Setup, intervalMs: number | null, windowMs: number): Promise<Phase> {
  const { emu, client } = await startEmulator(ctx, s, intervalMs ?? OFF_INTERVAL);
  let db: Database.Database | undefined;
  try {
    await client.close();
    const pid = emu.proc.pid!;
    await sleep(SETTLE_MS);
    // After the start-up reconciliation: the very containers of the set-up, none recreated.
    const ids = await appContainers(s.instance);
    if (ids.join() !== s.containerIds.join())
      throw new Error(`the apps' containers changed across restarts (${ids.length} running)`);
    const pids = enginePids(ids);
    const probe = processProbe(pid);

    db = new Database(join(s.dataDir, 'emulator.sqlite'), { readonly: true, fileMustExist: true });
    // Every row of a round has the round's time, whichever app the container belongs to.
    const newRounds = db.prepare(
      'SELECT time, COUNT(*) AS n FROM stats_samples WHERE time > ? GROUP BY time ORDER BY time',
    );
    let last = (db.prepare('SELECT MAX(time) FROM stats_samples').pluck().get() as number | null) ?? 0;
    const poll = (): { time: number; n: number }[] => {
      const rows = newRounds.all(last) as { time: number; n: number }[];
      if (rows.length) last = rows[rows.length - 1].time;
      return rows;
    };
    if (intervalMs !== null) {
      const deadline = Date.now() + intervalMs + 120_000;
      while (!poll().length) {
        if (Date.now() > deadline)
          throw new Error(`no stats round stored within ${ms(intervalMs + 120_000)} (interval ${ms(intervalMs)})`);
        await sleep(POLL_MS);
      }
    }

    const ticks: Tick[] = [];
    const tick = (engine: boolean) =>
      ticks.push({
        t: Date.now(),
        cpuNs: probe.cpuNs(),
        fds: probe.fds(),
        engine: engine ? engineCpu(pids) : undefined,
      });
    const t0 = Date.now();
    const cpu0 = processCpuMs(pid)!;
    tick(true);
    const found: { end: number; rows: number; detectedAt: number }[] = [];
    const deadline = t0 + windowMs + (intervalMs ?? 0) * 3 + 120_000;
    let closeAt = Number.POSITIVE_INFINITY;
    for (let i = 1; ; i++) {
      await sleep(POLL_MS);
      tick(i % ENGINE_EVERY === 0);
      const now = ticks[ticks.length - 1].t;
      if (now >= closeAt) break;
      for (const r of poll()) found.push({ end: r.time, rows: r.n, detectedAt: now });
      if (intervalMs === null) {
        if (found.length) throw new Error('a stats round was stored with sampling off');
        if (now - t0 >= windowMs) closeAt = now;
      } else if (closeAt === Number.POSITIVE_INFINITY) {
        const lastRound = found[found.length - 1];
        if (lastRound && lastRound.end >= t0 + windowMs - intervalMs / 2) closeAt = now + AFTER_ROUND_MS;
        if (now > deadline) throw new Error(`the window did not close: ${found.length} rounds in ${ms(now - t0)}`);
      }
    }
    const emuCpuMs = processCpuMs(pid)! - cpu0;
    tick(true);
    const first = ticks[0];
    const lastTick = ticks[ticks.length - 1];
    const rounds = found.map((r, k) => inRound(ticks, r, k === 0 ? t0 : found[k - 1].detectedAt));

    let points: number | null = null;
    if (intervalMs !== null) {
      const check = new ApiClient(emu.api, 1);
      try {
        await check.exchange(emu.token!);
        for (const app of APPS) {
          const series = JSON.parse(await check.expect('GET', `/v1/apps/${app}/stats/cpu/web?since=1`, 200)) as {
            time: string;
            value: number;
          }[];
          if (!series.length)
            throw new Error(`GET /v1/apps/${app}/stats/cpu/web?since=1 answered no point after sampling`);
          points = points === null ? series.length : Math.min(points, series.length);
        }
      } finally {
        await check.close();
      }
    }
    return {
      intervalMs,
      t0: first.t,
      wallMs: lastTick.t - first.t,
      emuCpuMs,
      emuRunMs: (lastTick.cpuNs - first.cpuNs) / 1e6,
      engine: engineDelta(first.engine!, lastTick.engine!),
      rounds,
      points,
    };
  } finally {
    db?.close();
    await emu.stop();
  }
}

/**
 * A round's start is the first jump in the emulator's open descriptors after the previous round (its list and
 * 20 concurrent inspects open new sockets to the engine; background work — log maintenance, engine events —
 * opens none); its end is its rows' time. CPU is read at the last poll before the jump and just after the commit.
 */
function inRound(ticks: Tick[], r: { end: number; rows: number; detectedAt: number }, after: number): Round {
  const none: Round = { ...r, wallMs: null, cpuMs: null, spanMs: null, engine: null, engineSpanMs: null };
  let start = -1;
  for (let j = 1; j < ticks.length && ticks[j].t <= r.end + POLL_MS; j++) {
    if (ticks[j].t <= after + AFTER_ROUND_MS || ticks[j].fds <= ticks[j - 1].fds) continue;
    const peak = Math.max(...ticks.slice(j, j + 4).map((x) => x.fds));
    if (peak - ticks[j - 1].fds >= FD_JUMP) {
      start = j - 1;
      break;
    }
  }
  const end = ticks.findIndex((x) => x.t >= r.detectedAt + AFTER_ROUND_MS);
  if (start < 0 || end < 0) return none;
  const a = ticks[start];
  const b = ticks[end];
  // Engine figures: the last read at or before the start, the first at or after the end.
  const ea = ticks
    .slice(0, start + 1)
    .reverse()
    .find((x) => x.engine);
  const eb = ticks.slice(end).find((x) => x.engine);
  return {
    ...r,
    wallMs: r.end - a.t,
    cpuMs: (b.cpuNs - a.cpuNs) / 1e6,
    spanMs: b.t - a.t,
    engine: ea && eb ? engineDelta(ea.engine!, eb.engine!) : null,
    engineSpanMs: ea && eb ? eb.t - ea.t : null,
  };
}

// ---------------------------------------------------------------------------------------------------------

const label = (i: number | null) =>
  i === null ? 'off (baseline)' : i >= 60_000 ? `${i / 60_000} min (default)` : `${i / 1000} s`;
const nz = <T>(xs: (T | null)[]): T[] => xs.filter((x): x is T => x !== null);
// Shares of a core: two decimals under 1 %, where the sampler's figures are.
const pct = (r: number) => (Math.abs(r) < 0.01 ? `${(r * 100).toFixed(2)} %` : pct1(r));
const signed = (r: number) => (r < 0 ? `−${pct(-r)}` : pct(r));
const sec = (x: number) => (Number.isFinite(x) ? `${(x / 1000).toFixed(x < 10_000 ? 2 : 1)} s` : 'n/a');

interface Derived {
  share: number; // emulator CPU ÷ window
  diff: number; // minus the same repetition's baseline
  perRoundMs: number; // median in-round CPU, less the baseline rate over the round's span
  perContainerUs: number;
  periodMs: number; // a round every
  roundShare: number; // perRoundMs ÷ periodMs
  wallMs: number; // median round wall time
  dockerd: number | null;
  dockerdDiff: number | null;
  dockerdPerRoundMs: number | null;
  rest: number | null;
  restDiff: number | null;
  restPerRoundMs: number | null;
}

function derive(p: Phase, off: Phase): Derived {
  const share = p.emuCpuMs / p.wallMs;
  const offRun = off.emuRunMs / off.wallMs;
  const perRound = median(nz(p.rounds.map((r) => (r.cpuMs === null ? null : r.cpuMs - offRun * r.spanMs!))));
  const rows = median(p.rounds.map((r) => r.rows));
  // The window opened as the round before it was stored: its n rounds fill it.
  const last = p.rounds[p.rounds.length - 1];
  const period = last ? (last.detectedAt - p.t0) / p.rounds.length : Number.NaN;
  const rate = (x: number | null, wall: number) => (x === null ? null : x / wall);
  const engine = (pick: (e: EngineCpu) => number | null) => {
    const offRate = rate(pick(off.engine), off.wallMs);
    const inWindow = rate(pick(p.engine), p.wallMs);
    const perRound = nz(
      p.rounds.map((r) =>
        r.engine && offRate !== null && pick(r.engine) !== null ? pick(r.engine)! - offRate * r.engineSpanMs! : null,
      ),
    );
    return { share: inWindow, diff: minus(inWindow, offRate), perRound: perRound.length ? median(perRound) : null };
  };
  const d = engine((e) => e.dockerd);
  const c = engine(rest);
  return {
    share,
    diff: share - off.emuCpuMs / off.wallMs,
    perRoundMs: perRound,
    perContainerUs: (perRound * 1000) / rows,
    periodMs: period,
    roundShare: perRound / period,
    wallMs: median(nz(p.rounds.map((r) => r.wallMs))),
    dockerd: d.share,
    dockerdDiff: d.diff,
    dockerdPerRoundMs: d.perRound,
    rest: c.share,
    restDiff: c.diff,
    restPerRoundMs: c.perRound,
  };
}

/**
 * Issue 6: the stats sampler's CPU cost with 20 idle web containers, at the default interval and at short
 * ones, against the same emulator and containers with sampling off.
 */
export const section: Section = {
  name: 'sampler',
  // Minutes even in a quick run (a settle period and the default interval's 60 s window per phase).
  slow: true,
  description: `stats sampler CPU with ${CONTAINERS} containers at 60 s / 5 s / 1 s vs sampling off, emulator and dockerd (issue 6)`,
  async run(ctx: BenchContext): Promise<Result> {
    const tmp = mkdtempSync(join(tmpdir(), 'bench-sampler-'));
    const setup: Setup = { tmp, dataDir: join(tmp, 'data'), appIds: [], instance: '', containerIds: [] };
    const reps = ctx.quick ? 1 : ctx.rounds;
    // The default interval's window holds ≥ 2 samples (quick: 1); the baseline's is as long.
    const window = (i: number | null) => {
      if (ctx.quick) return i === DEFAULT_INTERVAL ? DEFAULT_INTERVAL : 15_000;
      return i === null || i === DEFAULT_INTERVAL ? 2 * DEFAULT_INTERVAL : 60_000;
    };
    const on = [DEFAULT_INTERVAL, ...SHORT_INTERVALS];
    const phases = new Map<number | null, Phase[]>([null, ...on].map((i) => [i, []]));
    const derived = new Map<number, Derived[]>(on.map((i) => [i, []]));
    try {
      const t0 = performance.now();
      await setUp(ctx, setup);
      ctx.log(`sampler: ${APPS.length} apps × ${PER_APP} web containers (${SIZE}) up in ${ms(performance.now() - t0)}`);
      for (let rep = 1; rep <= reps; rep++) {
        const off = await measurePhase(ctx, setup, null, window(null));
        phases.get(null)!.push(off);
        ctx.log(
          `sampler: rep ${rep}/${reps}: off: emulator ${pct(off.emuCpuMs / off.wallMs)} of a core over ${sec(off.wallMs)}, dockerd ${off.engine.dockerd === null ? 'n/a' : pct(off.engine.dockerd / off.wallMs)}`,
        );
        for (const i of on) {
          const p = await measurePhase(ctx, setup, i, window(i));
          phases.get(i)!.push(p);
          const d = derive(p, off);
          derived.get(i)!.push(d);
          ctx.log(
            `sampler: rep ${rep}/${reps}: ${label(i)}: ${p.rounds.length} rounds in ${sec(p.wallMs)}, emulator ${pct(d.share)} (${signed(d.diff)} vs off), ` +
              `${ms(d.perRoundMs)} a round (${us(d.perContainerUs)} a container), a round every ${sec(d.periodMs)} lasting ${sec(d.wallMs)}, ` +
              `dockerd ${d.dockerd === null ? 'n/a' : pct(d.dockerd)} (${d.dockerdPerRoundMs === null ? 'n/a' : ms(d.dockerdPerRoundMs)} a round), ` +
              `rows/round ${[...new Set(p.rounds.map((r) => r.rows))].join('/')}, API points ${p.points}`,
          );
        }
      }
    } finally {
      await cleanUp(ctx, setup);
    }
    return report(reps, window, phases, derived);
  },
};

/**
 * Deletes the apps through the API (containers and images go with them), then removes whatever is left, then the
 * temp dir. The DELETE waits for the start-up reconciliation: sent during it, the emulator has been seen to
 * recreate a container of the app being deleted (reconcile() converges a list of apps read before the DELETE).
 */
async function cleanUp(ctx: BenchContext, s: Setup): Promise<void> {
  try {
    const { emu, client } = await startEmulator(ctx, s, OFF_INTERVAL);
    try {
      await sleep(SETTLE_MS);
      for (const app of APPS) {
        const res = await client.call('DELETE', `/v1/apps/${app}?current_name=${app}`);
        if (res.status !== 204 && res.status !== 404)
          ctx.log(`sampler: DELETE ${app}: ${res.status} ${res.text.slice(0, 200)}`);
      }
    } finally {
      await client.close();
      await emu.stop();
    }
  } catch (err) {
    ctx.log(`sampler: clean-up through the API failed: ${(err as Error).message}`);
  }
  const lines = (out: string) => out.split('\n').filter(Boolean);
  const left = new Set<string>();
  for (const app of APPS)
    for (const id of lines(
      await docker('ps', '-aq', '--filter', `label=io.scalingo-emulator.app-name=${app}`).catch(() => ''),
    ))
      left.add(id);
  if (s.instance)
    for (const id of lines(
      await docker('ps', '-aq', '--filter', `label=io.scalingo-emulator.instance=${s.instance}`).catch(() => ''),
    ))
      left.add(id);
  if (left.size) {
    ctx.log(`sampler: ${left.size} container(s) left after DELETE: removing them`);
    await docker('rm', '-f', ...left).catch(() => undefined);
  }
  // Images carry their app's id as a label, tagged or not (an image untagged while a container used it).
  for (const id of s.appIds) {
    const images = lines(
      await docker('images', '-q', '--filter', `label=io.scalingo-emulator.app-id=${id}`).catch(() => ''),
    );
    if (images.length) {
      ctx.log(`sampler: ${images.length} image(s) of app ${id} left: removing them`);
      await docker('rmi', '-f', ...new Set(images)).catch(() => undefined);
    }
  }
  rmSync(s.tmp, { recursive: true, force: true });
}

function report(
  reps: number,
  window: (i: number | null) => number,
  phases: Map<number | null, Phase[]>,
  derived: Map<number, Derived[]>,
): Result {
  const bm = (xs: (number | null)[], f: (n: number) => string) =>
    nz(xs).length ? bestMedian(nz(xs), f, false) : 'n/a';
  const offs = phases.get(null)!;
  const on = [DEFAULT_INTERVAL, ...SHORT_INTERVALS];
  const emulatorRows = [
    [
      'off (baseline)',
      `0 in ${sec(window(null))}`,
      bm(
        offs.map((p) => p.emuCpuMs / p.wallMs),
        pct,
      ),
      '—',
      '—',
      '—',
      '—',
      '—',
      '—',
    ],
  ];
  const engineRows = [
    [
      'off (baseline)',
      bm(
        offs.map((p) => (p.engine.dockerd === null ? null : p.engine.dockerd / p.wallMs)),
        pct,
      ),
      '—',
      '—',
      bm(
        offs.map((p) => (rest(p.engine) === null ? null : rest(p.engine)! / p.wallMs)),
        pct,
      ),
      '—',
      '—',
    ],
  ];
  for (const i of on) {
    const ds = derived.get(i)!;
    const ps = phases.get(i)!;
    emulatorRows.push([
      label(i),
      `${ps.map((p) => p.rounds.length).join(' / ')} in ~${sec(window(i))}`,
      bm(
        ds.map((d) => d.share),
        pct,
      ),
      bm(
        ds.map((d) => d.diff),
        signed,
      ),
      bm(
        ds.map((d) => d.perRoundMs),
        ms,
      ),
      bm(
        ds.map((d) => d.perContainerUs),
        us,
      ),
      bm(
        ds.map((d) => d.roundShare),
        pct,
      ),
      bm(
        ds.map((d) => d.wallMs),
        sec,
      ),
      bm(
        ds.map((d) => d.periodMs),
        sec,
      ),
    ]);
    engineRows.push([
      label(i),
      bm(
        ds.map((d) => d.dockerd),
        pct,
      ),
      bm(
        ds.map((d) => d.dockerdDiff),
        signed,
      ),
      bm(
        ds.map((d) => d.dockerdPerRoundMs),
        ms,
      ),
      bm(
        ds.map((d) => d.rest),
        pct,
      ),
      bm(
        ds.map((d) => d.restDiff),
        signed,
      ),
      bm(
        ds.map((d) => d.restPerRoundMs),
        ms,
      ),
    ]);
  }
  const defaults = derived.get(DEFAULT_INTERVAL)!;
  const diff = median(defaults.map((d) => d.diff));
  const fromRounds = median(defaults.map((d) => d.roundShare));
  const points = nz(on.flatMap((i) => phases.get(i)!.map((p) => p.points)));
  const rows = [...new Set(on.flatMap((i) => phases.get(i)!.flatMap((p) => p.rounds.map((r) => r.rows))))];
  const walls = on.flatMap((i) => phases.get(i)!.flatMap((p) => nz(p.rounds.map((r) => r.wallMs))));
  const found = on.flatMap((i) => phases.get(i)!.flatMap((p) => p.rounds)).filter((r) => r.wallMs !== null).length;
  const total = on.flatMap((i) => phases.get(i)!.flatMap((p) => p.rounds)).length;
  const reps_ = reps > 1 ? `best / median of ${reps} repetitions` : 'one repetition';
  const spread = (i: number) => {
    const xs = derived.get(i)!.map((d) => d.perRoundMs);
    return xs.length > 1 ? `${ms(min(xs))}–${ms(max(xs))}` : ms(xs[0]);
  };
  return {
    title: `Stats sampler: CPU with ${CONTAINERS} containers`,
    method:
      `One emulator data directory (child process, SQLite file), the busybox-web fixture deployed by archive to ${APPS.length} apps and web scaled to ` +
      `${PER_APP} × ${SIZE} in each (the platform's limit is 10 containers of a type): ${CONTAINERS} containers, idle (no request). The emulator is ` +
      `restarted on that directory for each phase with only \`intervals.statsSampleMs\` changed (EMULATOR_CONFIG file); the containers keep running ` +
      `across restarts and are reconciled, not recreated (their Docker ids are checked). Phases, interleaved, ${reps} repetition${reps > 1 ? 's' : ''}: sampling off ` +
      `(${OFF_INTERVAL / 3_600_000} h: never ticks), ${sec(DEFAULT_INTERVAL)} (the default), ${SHORT_INTERVALS.map(sec).join(' and ')}, over ${sec(window(null))}, ` +
      `${sec(window(DEFAULT_INTERVAL))}, and ${sec(window(SHORT_INTERVALS[0]))} each. Measuring starts ${sec(SETTLE_MS)} ` +
      `after the start banner; with sampling on, the window opens when a round's rows appear in the database (a read-only reader polls it every ` +
      `${POLL_MS} ms) and closes just after a later round's rows appear, so it holds whole rounds (the baseline's window is timed). Emulator CPU = user + system of the process ` +
      `(all threads) from /proc/<pid>/stat over the window; "difference" subtracts the same repetition's baseline. CPU per round = the emulator's ` +
      `CPU (sum of its threads' schedstat, exact) from the last ${POLL_MS} ms poll before the round's first requests to the engine (a jump of ≥ ${FD_JUMP} ` +
      `open descriptors: one list and ${CONTAINERS} concurrent inspects) to ${AFTER_ROUND_MS} ms after its rows were stored, less the baseline rate over ` +
      `that span; median of the phase's rounds. Round wall time = the rows' time (the emulator's clock once the last stats read returned) − that start. ` +
      `Engine: dockerd, containerd and the ${CONTAINERS} containers' shims from /proc (read every ${POLL_MS * ENGINE_EVERY} ms). After each sampling window, ` +
      `GET /v1/apps/:app/stats/cpu/web?since=1 must answer points for each app.`,
    tables: [
      {
        caption: `Emulator process, ${CONTAINERS} idle web containers; ${reps_}`,
        headers: [
          'sampling interval',
          'rounds in window',
          'emulator CPU (% of one core)',
          'difference with sampling off',
          'CPU per round',
          'per container per sample',
          'per round ÷ time between rounds',
          'round wall time',
          'a round every',
        ],
        rows: emulatorRows,
      },
      {
        caption: `Docker engine in the same windows (% of one core, and CPU during each round less its baseline rate); ${reps_}`,
        headers: [
          'sampling interval',
          'dockerd',
          'difference with off',
          'dockerd per round',
          'containerd + shims',
          'difference with off',
          'containerd + shims per round',
        ],
        rows: engineRows,
      },
    ],
    targets: [
      {
        what: `emulator CPU spent sampling ${CONTAINERS} containers at the default interval (${sec(DEFAULT_INTERVAL)})`,
        target: `≤ ${pct(MAX_SHARE)} of one core`,
        measured: `${signed(diff)} (window difference, median); ${pct(fromRounds)} (CPU per round ÷ time between rounds)`,
        met: diff <= MAX_SHARE && fromRounds <= MAX_SHARE,
      },
    ],
    notes: [
      `Samples were stored: ${rows.join('/')} rows per round in the database (${CONTAINERS} expected); GET /v1/apps/:app/stats/cpu/web?since=1 answered ` +
        `${points.length ? `${min(points)}–${max(points)}` : 'no'} points for each app after each sampling window. Round start found for ${found} of ${total} rounds.`,
      `A round lasts ${walls.length ? `${sec(median(walls))} (${sec(min(walls))}–${sec(max(walls))})` : 'n/a'} of wall time, nearly all of it waiting on the engine: a ` +
        `\`stats?stream=false\` read answers only after the engine has sampled the container twice, about a second apart, and the sampler reads ` +
        `${'`stats.concurrency`'} (8) containers at a time. At 5 s and 1 s a round outlasts the interval, so ticks during a round are skipped and ` +
        `rounds run back to back or every other tick ("a round every"). A round costs ${spread(DEFAULT_INTERVAL)} at the default interval and ` +
        `${spread(1_000)} at 1 s (per repetition); after a minute idle a round also opens its ${CONTAINERS + 1} connections to the engine again ` +
        `(Node's agent keeps idle sockets 5 s), where at 1 s it reuses most of the last round's.`,
      `The difference with sampling off, over a window, also holds whatever else the idle emulator did meanwhile (the logs module's maintenance ` +
        `every 10 s, engine events of other emulators' containers — the events stream is filtered on the managed label, not the instance); CPU per ` +
        `round, measured inside each round, is the sampler's own figure.`,
      `Part of the work is pushed to the Docker engine: each stats read makes dockerd (and containerd and the container's shim) read the cgroup ` +
        `figures, and dockerd keeps sampling each container about once a second while a read waits. dockerd's baseline includes other developers' ` +
        `containers and test runs on the same engine, so its figures are noisier than the emulator's.`,
    ],
  };
}
