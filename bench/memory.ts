import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  archiveOf,
  deleteApp,
  docker,
  instanceIdOf,
  postDeployment,
  removeInstanceContainers,
  untilRunning,
} from './lib/app-deploy.ts';
import { ensureEmulatorBundle } from './lib/bundle.ts';
import { ApiClient } from './lib/emulator-client.ts';
import { FUZZ_SEED, fuzzOverHttp, fuzzRoutes } from './lib/fuzz.ts';
import { collectGarbage, memoryUsage } from './lib/inspector.ts';
import { mib, processMemory, settledMemory } from './lib/proc-memory.ts';
import { type Child, spawnEmulator } from './lib/processes.ts';
import { int, pct, sleep } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';
import { dataDirsIn, IDLE_MAX_MIB, IDLE_TARGET, idleRun, settleFor } from './memory-idle.ts';

const LOADED_MAX_MIB = 200;
const FUZZ_MAX_GROWTH = 0.2;
const CONTAINERS = 20;
const APP = 'bench-memory-app';

// Every container prints $PRINT_LINES lines of ~90 bytes, then serves (web) or sleeps (printer).
const PRINT =
  'seq 1 $PRINT_LINES | sed "s/^/$CONTAINER GET \\/v1\\/apps\\/bench 200 4ms request_id=0123456789abcdef line /"';
const PROCFILE = [
  `web: ${PRINT}; mkdir -p /tmp/www && echo ok > /tmp/www/index.html && exec httpd -f -p $PORT -h /tmp/www`,
  `printer: ${PRINT}; exec sleep 86400`,
  `logger: ${PRINT}; exec sleep 86400`,
  '',
].join('\n');

/**
 * Issue 16, memory: idle RSS after start against bare Node and bare Hono servers; RSS with 20 running
 * containers and 1,000,000 stored log lines (written by the containers, through the real pipeline);
 * RSS after the reliability suite's fuzzing, against the same process's idle reading.
 */
export const section: Section = {
  name: 'memory',
  description: 'RSS idle (vs bare Node / Hono), with 20 containers + 1M stored log lines, after fuzzing (issue 16)',
  async run(ctx: BenchContext): Promise<Result> {
    const tmp = mkdtempSync(join(tmpdir(), 'bench-memory-'));
    const rounds = ctx.quick ? 1 : ctx.rounds;
    const settle = settleFor(ctx);
    const totalLines = ctx.quick ? 100_000 : 1_000_000;
    const fuzzCount = ctx.quick ? 1000 : 5000;
    const notes: string[] = [];
    try {
      ensureEmulatorBundle(ctx.emulatorDir);
      const freshDir = dataDirsIn(tmp);

      // 1. Idle after start.
      const idle = await idleRun(ctx, tmp, freshDir, settle, rounds);
      notes.push(...idle.notes);
      const emuIdle = idle.rss(IDLE_TARGET.dataDir);

      // 2. 20 running containers and the stored log lines, through the real pipeline.
      const loaded = await loadedRun(ctx, tmp, freshDir(), totalLines, settle);
      notes.push(...loaded.notes);

      // 3. The reliability suite's fuzzing, then back to idle?
      const fuzz = await fuzzRun(ctx, freshDir(), fuzzCount, settle);

      const fuzzGrowth = fuzz.after.rssMiB / fuzz.idle.rssMiB - 1;
      return {
        title: 'Memory: idle, 20 containers with stored log lines, after fuzzing',
        method:
          `RSS is VmRSS of the server's process read from /proc/<pid>/status by the driver, once it has stopped moving (two readings 500 ms apart within 0.5 MiB, ` +
          `after ${settle.minMs / 1000} s, at most ${settle.maxMs / 1000} s); VmHWM is the process's peak RSS over its life. Idle: each server started in its own ` +
          `child process, asked one request (/_emulator/health for the emulator), then read; ${rounds} round(s), servers interleaved. Baselines in the same run: a bare ` +
          `node:http server and a bare Hono server (bench/lib/hello-server.ts), both bundled by esbuild and started with plain node, like the emulator's ` +
          `\`npm start\` bundle (dist/main.mjs, with the environment and node options of the start script), the figure the target applies to; the tsx rows show what the TypeScript loader alone adds. ` +
          `Loaded: the bundle with a data dir and \`logs.historyMaxLines\` raised to ${int(totalLines + 100_000)} (the default keeps 10,000 lines an app in SQLite and rotates the rest ` +
          `into gzip archives), an app deployed by archive whose Procfile web, printer and logger processes each print $PRINT_LINES lines of ~90 bytes (busybox seq | sed) before ` +
          `serving or sleeping; web 1 + printer 10 + logger ${CONTAINERS - 11} (10 a type is the platform's limit) = ${CONTAINERS} running containers, ${int(totalLines)} lines in all, every one through Docker's log ` +
          `stream, the emulator's collector and its SQLite store (counted in log_chunks, read-only, from the driver); that emulator runs with --inspect=127.0.0.1:0 to read process.memoryUsage() and force a GC after the settled reading. Fuzz: ${int(fuzzCount)} hostile requests from the ` +
          `reliability suite's generator (test/reliability/support/hostile.ts, seed ${FUZZ_SEED}, every route, 8 keep-alive connections over HTTP) to the bundle with a data dir ` +
          `and the suite's target objects, started with --inspect=127.0.0.1:0 so a full GC can be forced at the end (after the settled reading the target uses); its idle reading is taken in the same process just before.`,
        tables: [
          {
            caption: `Idle after start: best / median of ${rounds} round(s)`,
            headers: ['server', 'RSS', 'VmHWM'],
            rows: idle.rows,
          },
          {
            caption: `Loaded: ${CONTAINERS} running containers, ${int(loaded.stored)} log lines stored`,
            headers: ['reading', 'RSS', 'VmHWM'],
            rows: [
              ['before the deployment (after start)', mib(loaded.before.rssMiB), mib(loaded.before.hwmMiB)],
              [
                `${CONTAINERS} containers running, lines stored, settled`,
                `${mib(loaded.settled.rssMiB)} (anonymous ${mib(loaded.settled.anonMiB)}, file ${mib(loaded.settled.fileMiB)})`,
                mib(loaded.settled.hwmMiB),
              ],
              ['peak sampled while the lines came in (every 250 ms)', mib(loaded.peakMiB), '—'],
              [
                `time for the ${int(loaded.stored)} lines to be stored (from the scale to ${CONTAINERS} containers)`,
                `${(loaded.fillMs / 1000).toFixed(1)} s (${int(loaded.stored / (loaded.fillMs / 1000))} lines/s)`,
                '—',
              ],
              [
                'process.memoryUsage() at the settled reading: JS heap used / total, external (of which ArrayBuffers)',
                `${mib(loaded.usage.heapUsed)} / ${mib(loaded.usage.heapTotal)}, ${mib(loaded.usage.external)} (${mib(loaded.usage.arrayBuffers)})`,
                '—',
              ],
              [
                'after a forced full GC (inspector), settled',
                mib(loaded.collected.rssMiB),
                mib(loaded.collected.hwmMiB),
              ],
              [
                'process.memoryUsage() after that GC',
                `${mib(loaded.collectedUsage.heapUsed)} / ${mib(loaded.collectedUsage.heapTotal)}, ${mib(loaded.collectedUsage.external)} (${mib(loaded.collectedUsage.arrayBuffers)})`,
                '—',
              ],
            ],
          },
          {
            caption: `Fuzz: ${int(fuzz.count)} hostile requests in ${(fuzz.ms / 1000).toFixed(1)} s; statuses ${JSON.stringify(fuzz.statuses)}`,
            headers: ['reading', 'RSS', 'VmHWM'],
            rows: [
              ['idle, same process, before the fuzzing', mib(fuzz.idle.rssMiB), mib(fuzz.idle.hwmMiB)],
              ['right after the last answer', mib(fuzz.right.rssMiB), mib(fuzz.right.hwmMiB)],
              [
                `after settling (${(fuzz.after.afterMs / 1000).toFixed(0)} s)`,
                mib(fuzz.after.rssMiB),
                mib(fuzz.after.hwmMiB),
              ],
              ['growth over idle (settled)', pct(fuzzGrowth), '—'],
              [
                'after a forced full GC (inspector HeapProfiler.collectGarbage): what the requests left reachable',
                `${mib(fuzz.collected.rssMiB)} (${pct(fuzz.collected.rssMiB / fuzz.idle.rssMiB - 1)} over idle)`,
                mib(fuzz.collected.hwmMiB),
              ],
              ...(['idleUsage', 'afterUsage'] as const).map((w) => {
                const u = fuzz[w];
                return [
                  `process.memoryUsage() after a full GC, ${w === 'idleUsage' ? 'idle' : 'after the fuzzing'}: JS heap used / total, external (of which ArrayBuffers)`,
                  `${mib(u.heapUsed)} / ${mib(u.heapTotal)}, ${mib(u.external)} (${mib(u.arrayBuffers)})`,
                  `RSS ${mib(u.rss)}`,
                ];
              }),
            ],
          },
        ],
        targets: [
          {
            what: 'idle RSS after start (npm start bundle, data dir)',
            target: `≤ ${IDLE_MAX_MIB} MiB`,
            measured: `${mib(emuIdle)} (median); bare Hono ${mib(idle.rss(IDLE_TARGET.bareHono))}, bare Node ${mib(idle.rss(IDLE_TARGET.bareNode))}`,
            met: emuIdle <= IDLE_MAX_MIB,
          },
          {
            what: `RSS with ${CONTAINERS} running containers and ${int(loaded.stored)} stored log lines`,
            target: `≤ ${LOADED_MAX_MIB} MiB${totalLines < 1_000_000 ? ' (target is for 1,000,000 lines: quick run)' : ''}`,
            measured: `${mib(loaded.settled.rssMiB)} settled, VmHWM ${mib(loaded.settled.hwmMiB)}`,
            met: loaded.settled.rssMiB <= LOADED_MAX_MIB && loaded.stored >= 1_000_000,
          },
          {
            what: 'RSS after the fuzzing, vs idle of the same process',
            target: `≤ +${FUZZ_MAX_GROWTH * 100} %`,
            measured: `${pct(fuzzGrowth)} (${mib(fuzz.idle.rssMiB)} → ${mib(fuzz.after.rssMiB)})`,
            met: fuzzGrowth <= FUZZ_MAX_GROWTH,
          },
        ],
        notes,
      };
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};

/** 20 printing containers, `totalLines` stored through the real pipeline; `nodeArgs` adds node options (a profile). */
export async function loadedRun(
  ctx: BenchContext,
  tmp: string,
  dataDir: string,
  totalLines: number,
  settle: { minMs: number; maxMs: number },
  nodeArgs: string[] = [],
) {
  const notes: string[] = [];
  // The project's own config (users, their tokens) plus a history that keeps every line in SQLite.
  const config = JSON.parse(readFileSync(join(ctx.emulatorDir, 'emulator.config.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const configFile = join(tmp, 'memory.config.json');
  writeFileSync(
    configFile,
    JSON.stringify({ ...config, logs: { historyMaxLines: totalLines + 100_000, historyMaxBytes: 1024 * 1024 * 1024 } }),
  );
  const appDir = join(tmp, 'printer-app');
  mkdirSync(appDir);
  writeFileSync(join(appDir, 'Procfile'), PROCFILE);
  const archive = await archiveOf(appDir, join(tmp, 'printer-app.tar.gz'));
  const perContainer = Math.ceil(totalLines / CONTAINERS);

  let emu: Child | undefined;
  let client: ApiClient | undefined;
  let db: Database.Database | undefined;
  const instanceId = () => instanceIdOf(dataDir);
  let id: string | null = null;
  let appId: string | undefined;
  try {
    // The inspector (loopback, port 0) only to read process.memoryUsage() and force a GC after the settled reading.
    emu = await spawnEmulator({
      emulatorDir: ctx.emulatorDir,
      dataDir,
      bundled: true,
      env: { EMULATOR_CONFIG: configFile },
      nodeArgs: ['--inspect=127.0.0.1:0', ...nodeArgs],
    });
    id = instanceId();
    client = new ApiClient(emu.api, 4);
    await client.exchange(emu.token!);
    const before = await settledMemory(emu.proc.pid, settle);
    appId = (
      JSON.parse(await client.expect('POST', '/v1/apps', 201, { app: { name: APP } })) as { app: { id: string } }
    ).app.id;
    await client.expect('POST', `/v1/apps/${APP}/variables`, 201, {
      variable: { name: 'PRINT_LINES', value: String(perContainer) },
    });
    await postDeployment(client, APP, archive);
    await untilRunning(client, APP);
    db = new Database(join(dataDir, 'emulator.sqlite'), { readonly: true, fileMustExist: true });
    // Lines are stored in chunks (migration 026): a chunk's JSON lines are [ts, time_ms, container, stream, text].
    const maxSeq = db.prepare('SELECT COALESCE(MAX(last_seq), 0) FROM log_chunks').pluck();
    const countLines = db
      .prepare(
        "SELECT COUNT(*) FROM log_chunks, json_each(log_chunks.lines) AS l WHERE l.value ->> 2 LIKE 'web-%' " +
          "OR l.value ->> 2 LIKE 'printer-%' OR l.value ->> 2 LIKE 'logger-%'",
      )
      .pluck();
    const startSeq = maxSeq.get() as number;
    let peak = processMemory(emu.proc.pid).rssMiB;
    const t0 = performance.now();
    // The platform's limit is 10 containers a type: web 1 + printer 10 + logger 9.
    await client.scale(APP, [
      { name: 'printer', amount: 10 },
      { name: 'logger', amount: CONTAINERS - 11 },
    ]);
    const running = (await docker('ps', '-q', '--filter', `label=io.scalingo-emulator.app-name=${APP}`))
      .split('\n')
      .filter(Boolean).length;
    if (running !== CONTAINERS)
      throw new Error(`${running} containers of ${APP} running in Docker, ${CONTAINERS} expected`);
    // Every line of every container, stored: the web container printed its share before the scale.
    const want = perContainer * CONTAINERS;
    const deadline = performance.now() + (ctx.quick ? 120_000 : 600_000);
    let stored = 0;
    for (;;) {
      await sleep(250);
      peak = Math.max(peak, processMemory(emu.proc.pid).rssMiB);
      if ((maxSeq.get() as number) - startSeq + perContainer < want) {
        if (performance.now() > deadline) break;
        continue;
      }
      stored = countLines.get() as number;
      if (stored >= want || performance.now() > deadline) break;
    }
    const fillMs = performance.now() - t0;
    stored = countLines.get() as number;
    if (stored < want)
      notes.push(
        `Only ${int(stored)} of ${int(want)} lines were stored before the deadline: the reading is of that state.`,
      );
    const settled = await settledMemory(emu.proc.pid, settle);
    const usage = await memoryUsage(emu.errors);
    await collectGarbage(emu.errors);
    const collected = await settledMemory(emu.proc.pid, { minMs: 1000, maxMs: settle.maxMs, toleranceMiB: 0.25 });
    const collectedUsage = await memoryUsage(emu.errors);
    ctx.log(
      `memory: loaded: ${int(stored)} lines in ${(fillMs / 1000).toFixed(1)} s; RSS ${mib(settled.rssMiB)} (anon ${mib(settled.anonMiB)}), HWM ${mib(settled.hwmMiB)}, peak sampled ${mib(peak)}; heap ${mib(usage.heapUsed)}/${mib(usage.heapTotal)}, after GC RSS ${mib(collected.rssMiB)} heap ${mib(collectedUsage.heapUsed)}`,
    );
    return { before, settled, usage, collected, collectedUsage, peakMiB: peak, stored, fillMs, notes };
  } finally {
    db?.close();
    await deleteApp(client, APP, appId);
    await client?.close();
    await emu?.stop();
    const left = await removeInstanceContainers(id);
    if (left) ctx.log(`memory: removed ${left} container(s) the emulator left behind`);
  }
}

async function fuzzRun(ctx: BenchContext, dataDir: string, count: number, settle: { minMs: number; maxMs: number }) {
  const { routes, bodyLimit } = await fuzzRoutes(ctx.emulatorDir);
  let emu: Child | undefined;
  let client: ApiClient | undefined;
  let id: string | null = null;
  try {
    // The inspector (loopback, port 0) only to force a full collection at the end: what stays is retained.
    emu = await spawnEmulator({
      emulatorDir: ctx.emulatorDir,
      dataDir,
      bundled: true,
      nodeArgs: ['--inspect=127.0.0.1:0'],
    });
    id = instanceIdOf(dataDir);
    client = new ApiClient(emu.api, 2);
    await client.exchange(emu.token!);
    // The suite's targets, so hostile bodies reach the handlers behind the 404s.
    const body = async (method: 'POST', path: string, status: number, b: unknown) =>
      JSON.parse(await client!.expect(method, path, status, b)) as Record<string, { id: string }>;
    const app = (await body('POST', '/v1/apps', 201, { app: { name: 'fuzz-target' } })).app;
    const variable = (
      await body('POST', '/v1/apps/fuzz-target/variables', 201, { variable: { name: 'FUZZ', value: '1' } })
    ).variable;
    const params = {
      app: ['fuzz-target', app.id],
      id: [variable.id],
      metric: ['cpu', 'memory', 'router'],
      container: ['web'],
      index: ['1'],
      container_id: ['web-1', 'one-off-1'],
    };
    const idle = await settledMemory(emu.proc.pid, settle);
    // Where idle RSS goes, after a full GC (read once the idle RSS reading is taken, so it does not move it).
    await collectGarbage(emu.errors);
    const idleUsage = await memoryUsage(emu.errors);
    const f = await fuzzOverHttp({
      repoDir: ctx.repoDir,
      api: emu.api,
      apiToken: emu.token!,
      routes,
      bodyLimit,
      params,
      count,
      concurrency: 8,
    });
    const right = processMemory(emu.proc.pid);
    // Longer than the idle settle: what the requests allocated has to be collected first.
    const after = await settledMemory(emu.proc.pid, {
      minMs: settle.minMs * 3,
      maxMs: settle.maxMs * 2,
      toleranceMiB: 0.25,
    });
    await collectGarbage(emu.errors);
    const collected = await settledMemory(emu.proc.pid, { minMs: 1000, maxMs: settle.maxMs, toleranceMiB: 0.25 });
    const afterUsage = await memoryUsage(emu.errors);
    const health = await fetch(`${emu.api}/_emulator/health`);
    await health.arrayBuffer();
    if (health.status !== 200) throw new Error(`health ${health.status} after the fuzzing`);
    ctx.log(
      `memory: fuzz ${count} requests in ${Math.round(f.ms)} ms, statuses ${JSON.stringify(f.statuses)}; RSS ${mib(idle.rssMiB)} → ${mib(right.rssMiB)} → ${mib(after.rssMiB)}, ${mib(collected.rssMiB)} after a forced GC`,
    );
    return { idle, right, after, collected, idleUsage, afterUsage, count, ms: f.ms, statuses: f.statuses };
  } finally {
    await client?.close();
    await emu?.stop();
    const left = await removeInstanceContainers(id);
    if (left) ctx.log(`memory: removed ${left} container(s) the fuzzing left behind`);
  }
}
