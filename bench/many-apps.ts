import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { c as tarCreate } from 'tar';
import WebSocket from 'ws';
import { docker, runRawWeb } from './lib/app-deploy.ts';
import { ensureEmulatorBundle } from './lib/bundle.ts';
import { processCpuMs } from './lib/cpu.ts';
import { ApiClient } from './lib/emulator-client.ts';
import { followEngineLogs } from './lib/engine-logs.ts';
import { lineTimeMs } from './lib/line-time.ts';
import { processMemory, settledMemory } from './lib/proc-memory.ts';
import { type Child, spawnEmulator } from './lib/processes.ts';
import { bestMedian, median, ms, percentile, sleep } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

const _run = promisify(execFile);
const PREFIX = 'bench-many-';
const PER_APP = 2;
const RAW_LABEL = 'io.scalingo-emulator.bench=many-apps-raw';
const APP_NAME_LABEL = 'io.scalingo-emulator.app-name';
const ADMIN = 'admin-token-bench-many-apps-0000';
// Apps started (or deployed) at once: the API's clients and the raw CLI alike, so neither floods the engine more.
const WORKERS = 8;
// Issue 40's targets.
const MAX_START_RATIO = 1.3;
const MAX_RSS_MIB = 250;
const MAX_CPU_SHARE = 0.05;
const MAX_PS_P99_MS = 20;
const MAX_LOG_P99_OVER_RAW_MS = 20;
// A line a second per container, numbered; the web process of busybox-web otherwise.
const TICKER = 'i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 1; done';

/** Runs fn over items with at most `workers` at a time. */
async function eachLimited<T>(items: T[], workers: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(workers, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

/**
 * Host ports (127.0.0.1:<port>->5000/tcp) of the running containers `docker ps` selects with these filters, once
 * `expected` are listed (a container's port shows a moment after `docker run -d` returns); the states of what is
 * missing otherwise.
 */
async function publishedPorts(
  filters: string[],
  keep: (appName: string) => boolean,
  expected: number,
): Promise<number[]> {
  const list = async (all: boolean) =>
    (
      await docker(
        'ps',
        ...(all ? ['-a'] : []),
        ...filters.flatMap((f) => ['--filter', f]),
        '--format',
        // The app first behind a prefix: an empty label would be trimmed away with the output's first character.
        `app:{{.Label "${APP_NAME_LABEL}"}}\t{{.Ports}}\t{{.Status}}`,
      )
    )
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice('app:'.length).split('\t'))
      .filter(([app]) => keep(app));
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ports = (await list(false)).flatMap(([, p]) => {
      const m = /127\.0\.0\.1:(\d+)->5000\/tcp/.exec(p ?? '');
      return m ? [Number(m[1])] : [];
    });
    if (ports.length === expected) return ports;
    if (Date.now() > deadline) {
      const states = (await list(true))
        .filter(([, p]) => !/->5000/.test(p ?? ''))
        .map(([app, p, st]) => `${app} "${p}" ${st}`);
      throw new Error(`${ports.length} containers published, ${expected} expected; the others: ${states.join('; ')}`);
    }
    await sleep(200);
  }
}

/** Polls each port until its container answers HTTP (any status). */
async function allAnswer(ports: number[], deadlineMs: number): Promise<void> {
  await eachLimited(ports, 32, async (port) => {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/`);
        await res.arrayBuffer();
        return;
      } catch {
        if (Date.now() > deadlineMs) throw new Error(`127.0.0.1:${port} did not answer`);
        await sleep(20);
      }
    }
  });
}

/** Latency of the ticker lines: receipt − the engine timestamp each line carries. */
class Latencies {
  readonly ms: number[] = [];
  measuring = false;
  take(line: string, recv: number): void {
    if (this.measuring && line.includes('] tick ')) this.ms.push(recv - lineTimeMs(line));
  }
  takeRaw(line: string, recv: number): void {
    if (this.measuring && line.includes(' tick ')) this.ms.push(recv - lineTimeMs(line));
  }
}

/**
 * Issue 40: the laptop case, 100 apps × 2 web containers (busybox stack) started through the API
 * against 200 raw `docker run`, then the emulator idle with them: RSS, CPU, `ps` latency, a log line's
 * latency to its WebSocket subscriber while every container prints a line a second, and reset().
 */
export const section: Section = {
  name: 'many-apps',
  description:
    '100 apps × 2 running containers: start vs raw docker run, idle RSS/CPU, ps p99, log latency, reset (issue 40)',
  slow: true,
  async run(ctx: BenchContext): Promise<Result> {
    const apps = Array.from({ length: ctx.quick ? 10 : 100 }, (_, i) => `${PREFIX}${String(i + 1).padStart(3, '0')}`);
    const containers = apps.length * PER_APP;
    const rounds = ctx.quick ? 1 : ctx.rounds;
    const cpuWindowMs = ctx.quick ? 30_000 : 300_000;
    const logWindowMs = ctx.quick ? 10_000 : 30_000;
    const tmp = mkdtempSync(join(tmpdir(), 'bench-many-apps-'));
    const dataDir = join(tmp, 'data');
    let emu: Child | undefined;
    let client: ApiClient | undefined;
    let resetDone = false;
    const isOurs = (app: string) => app.startsWith(PREFIX);
    const emuStart: number[] = [];
    const rawStart: number[] = [];
    const rawLog = new Latencies();
    const emuLog = new Latencies();
    const removeRaw = async () => {
      const ids = (await docker('ps', '-aq', '--filter', `label=${RAW_LABEL}`)).split('\n').filter(Boolean);
      for (let i = 0; i < ids.length; i += 50) await docker('rm', '-f', ...ids.slice(i, i + 50));
    };
    try {
      ensureEmulatorBundle(ctx.emulatorDir);
      const appDir = join(tmp, 'many-app');
      mkdirSync(appDir);
      const fixture = join(ctx.repoDir, 'fixtures/apps/busybox-web');
      copyFileSync(join(fixture, 'index.html'), join(appDir, 'index.html'));
      const fixtureWeb = readFileSync(join(fixture, 'Procfile'), 'utf8')
        .split('\n')
        .find((l) => l.startsWith('web:'));
      if (!fixtureWeb) throw new Error('busybox-web has no web process');
      const webCommand = `(${TICKER}) & ${fixtureWeb.slice('web:'.length).trim()}`;
      writeFileSync(join(appDir, 'Procfile'), `web: ${webCommand}\n`);
      const archive = join(tmp, 'app.tar.gz');
      await tarCreate({ gzip: true, file: archive, cwd: tmp }, ['many-app']);

      // The npm start bundle: RSS is the product's, not the TypeScript loader's.
      emu = await spawnEmulator({
        emulatorDir: ctx.emulatorDir,
        dataDir,
        bundled: true,
        profileDir: ctx.profileDir,
        env: { EMULATOR_ADMIN_TOKEN: ADMIN },
      });
      const pid = emu.proc.pid;
      const c = (client = new ApiClient(emu.api, WORKERS + 2));
      await c.exchange(emu.token ?? '');
      const idleRss = (await settledMemory(pid, { minMs: 2_000, maxMs: 10_000 })).rssMiB;

      // Set-up, not timed: every app created and deployed (one build each), then scaled to 0.
      const deployT0 = performance.now();
      await eachLimited(apps, 4, async (app) => {
        await c.expect('POST', '/v1/apps', 201, { app: { name: app } });
        await c.expect('POST', `/v1/apps/${app}/deployments`, 201, { deployment: { source_url: archive } });
        for (let i = 0; ; i++) {
          const a = JSON.parse(await c.expect('GET', `/v1/apps/${app}`, 200)) as { app: { status: string } };
          if (a.app.status === 'running') break;
          if (i > 1200) throw new Error(`${app}: deployment did not finish (status ${a.app.status})`);
          await sleep(100);
        }
      });
      const deployMs = performance.now() - deployT0;
      const formation = JSON.parse(await c.expect('GET', `/v1/apps/${apps[0]}/containers`, 200)) as {
        containers: { name: string; command: string }[];
      };
      const command = formation.containers.find((x) => x.name === 'web')?.command;
      if (command !== webCommand) throw new Error(`web command in the formation: ${command}`);
      const image = (
        await docker('ps', '--filter', `label=${APP_NAME_LABEL}=${apps[0]}`, '--format', '{{.Image}}')
      ).split('\n')[0];
      if (!image) throw new Error(`no running container of ${apps[0]}`);
      await eachLimited(apps, WORKERS, async (app) => void (await c.scale(app, [{ name: 'web', amount: 0 }])));
      ctx.log(`many-apps: ${apps.length} apps deployed in ${ms(deployMs)}; image of the first ${image}`);

      const emulatorStart = async (): Promise<number> => {
        const t0 = performance.now();
        await eachLimited(apps, WORKERS, async (app) => {
          if ((await c.scale(app, [{ name: 'web', amount: PER_APP }])) !== 'done')
            throw new Error(`${app}: not scaled`);
        });
        const filters = [`label=${APP_NAME_LABEL}`, 'label=io.scalingo-emulator.type=web'];
        const ports = await publishedPorts(filters, isOurs, containers);
        await allAnswer(ports, Date.now() + 120_000);
        return performance.now() - t0;
      };
      const rawStartRun = async (): Promise<number> => {
        const t0 = performance.now();
        await eachLimited(apps, WORKERS, async () => {
          await Promise.all(
            Array.from({ length: PER_APP }, (_, i) =>
              runRawWeb({ label: RAW_LABEL, image, container: `web-${i + 1}`, command: ['sh', '-c', webCommand] }),
            ),
          );
        });
        const ports = await publishedPorts([`label=${RAW_LABEL}`], () => true, containers);
        await allAnswer(ports, Date.now() + 120_000);
        return performance.now() - t0;
      };

      for (let round = 1; round <= rounds; round++) {
        // Raw first on odd rounds, the emulator first on even ones, but the last round ends with the emulator's containers
        // running (the idle figures follow); the other side has nothing running meanwhile.
        const order = round % 2 || round === rounds ? (['raw', 'emulator'] as const) : (['emulator', 'raw'] as const);
        for (const side of order) {
          if (side === 'raw') {
            const r = await rawStartRun();
            rawStart.push(r);
            if (round === rounds) {
              // The raw log path: the engine's log stream of each container (the request `docker logs -f` makes),
              // read by one client here (200 CLI processes would load the machine more than what is measured).
              const ids = (await docker('ps', '-q', '--filter', `label=${RAW_LABEL}`)).split('\n').filter(Boolean);
              const streams = ids.map((id) => followEngineLogs(id, (line, recv) => rawLog.takeRaw(line, recv)));
              await sleep(3_000);
              rawLog.measuring = true;
              await sleep(logWindowMs);
              rawLog.measuring = false;
              for (const s of streams) s.close();
            }
            await removeRaw();
          } else {
            const e = await emulatorStart();
            emuStart.push(e);
            if (round !== rounds)
              await eachLimited(apps, WORKERS, async (app) => void (await c.scale(app, [{ name: 'web', amount: 0 }])));
          }
        }
        ctx.log(
          `many-apps: round ${round}/${rounds}: emulator ${ms(emuStart.at(-1) ?? 0)}, raw ${ms(rawStart.at(-1) ?? 0)}, ratio ${((emuStart.at(-1) ?? 0) / (rawStart.at(-1) ?? 1)).toFixed(2)}×`,
        );
      }
      // Idle with 200 running containers.
      const rss = await settledMemory(pid, { minMs: 10_000, maxMs: 60_000 });
      ctx.log(`many-apps: settled RSS ${rss.rssMiB.toFixed(1)} MiB (idle before the apps ${idleRss.toFixed(1)} MiB)`);
      const cpu0 = processCpuMs(pid);
      const w0 = performance.now();
      await sleep(cpuWindowMs);
      const cpu1 = processCpuMs(pid);
      const cpuShare = cpu0 === null || cpu1 === null ? Number.NaN : (cpu1 - cpu0) / (performance.now() - w0);
      ctx.log(`many-apps: CPU over ${ms(cpuWindowMs)}: ${(cpuShare * 100).toFixed(2)} % of a core`);

      // GET /v1/apps/:app/ps, one request at a time over the apps.
      const psMs: number[] = [];
      for (let i = 0; i < 20 + 300; i++) {
        const app = apps[i % apps.length];
        const t0 = performance.now();
        const body = JSON.parse(await c.expect('GET', `/v1/apps/${app}/ps`, 200)) as { containers: unknown[] };
        if (i >= 20) psMs.push(performance.now() - t0);
        if (body.containers.length !== PER_APP) throw new Error(`${app}/ps: ${body.containers.length} containers`);
      }

      // A WebSocket subscriber per app while every container prints a line a second.
      const sockets: WebSocket[] = [];
      for (const app of apps) {
        const { logs_url } = JSON.parse(await c.expect('GET', `/v1/apps/${app}/logs`, 200)) as { logs_url: string };
        const ws = new WebSocket(`${logs_url.replace(/^http/, 'ws')}&stream=true`);
        ws.on('message', (data: Buffer) => {
          const recv = Date.now();
          const ev = JSON.parse(data.toString('utf8')) as { event: string; log?: string };
          if (ev.event === 'log' && ev.log) for (const line of ev.log.split('\n')) emuLog.take(line, recv);
        });
        await new Promise<void>((ok, fail) => {
          ws.once('open', () => ok());
          ws.once('error', fail);
        });
        sockets.push(ws);
      }
      await sleep(3_000);
      emuLog.measuring = true;
      await sleep(logWindowMs);
      emuLog.measuring = false;
      for (const ws of sockets) ws.close();
      const rssPeak = processMemory(pid).hwmMiB;

      const r0 = performance.now();
      const res = await fetch(`${emu.api}/_emulator/reset`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      const resetMs = performance.now() - r0;
      if (res.status !== 204) throw new Error(`reset: ${res.status} ${await res.text()}`);
      resetDone = true;
      await publishedPorts([`label=${APP_NAME_LABEL}`], isOurs, 0);

      const ratioMedian = median(emuStart) / median(rawStart);
      const rawP99 = percentile(rawLog.ms, 99);
      const emuP99 = percentile(emuLog.ms, 99);
      const psP99 = percentile(psMs, 99);
      const expected = (logWindowMs / 1000) * containers;
      return {
        title: `Many apps: ${apps.length} apps × ${PER_APP} running containers`,
        method:
          `Emulator in a child process (the npm start bundle, a data dir, the default configuration: the stats sampler at its default interval). ` +
          `${apps.length} apps created and deployed by archive through the API (set-up, not timed: ${ms(deployMs)}, 4 at a time), each a busybox-stack app ` +
          `whose web process is busybox-web's plus a ticker printing a numbered line a second (\`web: (${TICKER}) & …httpd…\`), then scaled to 0. ` +
          `Per round: POST /scale {web: ${PER_APP}} for every app (${WORKERS} apps at a time, each operation polled every 20 ms until done), one \`docker ps\` for the ` +
          `published ports, then an HTTP answer from each of the ${containers} containers; baseline in the same round: ${containers} \`docker run -d\` (CLI, ` +
          `${WORKERS} apps at a time, 2 runs each) of the same image, command, memory limit and port publishing, the same \`docker ps\` and answers, then \`docker rm -f\`; ` +
          `raw and emulator alternate which goes first, the other side has nothing running meanwhile. ${rounds} round(s). ` +
          `Then, the emulator's ${containers} containers running: RSS once settled; its CPU (/proc/<pid>/stat) over ${ms(cpuWindowMs)} of idle; ` +
          `GET /v1/apps/:app/ps 300 times one at a time over the apps (after 20 uncounted); one WebSocket subscriber per app (\`logs_url&stream=true\`), ` +
          `latency = receipt − the engine timestamp the line carries, over ${ms(logWindowMs)} (after 3 s); the raw baseline is measured in the last round with ` +
          `the ${containers} raw containers running, each followed by the engine's log stream (\`GET /containers/{id}/logs?follow=1&timestamps=1\`, what ` +
          `\`docker logs -f\` asks), read by one client in the bench process. Finally POST /_emulator/reset, timed until its 204.`,
        tables: [
          {
            caption: `best / median of ${rounds} round(s)`,
            headers: ['what', 'time'],
            rows: [
              [
                `emulator: scale ${apps.length} apps to web ${PER_APP}, all ${containers} answer`,
                bestMedian(emuStart, ms, false),
              ],
              [`raw: ${containers} × docker run -d, all answer`, bestMedian(rawStart, ms, false)],
              ['ratio emulator ÷ raw (median)', `${ratioMedian.toFixed(2)}×`],
            ],
          },
          {
            caption: `idle with ${containers} running containers`,
            headers: ['what', 'measured'],
            rows: [
              [
                'emulator RSS: after start (no app) / settled with the containers / peak (VmHWM)',
                `${idleRss.toFixed(1)} / ${rss.rssMiB.toFixed(1)} / ${rssPeak.toFixed(1)} MiB`,
              ],
              [`emulator CPU over ${ms(cpuWindowMs)}`, `${(cpuShare * 100).toFixed(2)} % of a core`],
              ['GET /v1/apps/:app/ps p50 / p99', `${ms(percentile(psMs, 50))} / ${ms(psP99)}`],
              [
                `log line → WebSocket, emulator: p50 / p99 (${emuLog.ms.length} lines, ~${expected} expected)`,
                `${ms(percentile(emuLog.ms, 50))} / ${ms(emuP99)}`,
              ],
              [
                `log line → engine log stream, raw: p50 / p99 (${rawLog.ms.length} lines, ~${expected} expected)`,
                `${ms(percentile(rawLog.ms, 50))} / ${ms(rawP99)}`,
              ],
              [`reset() with ${apps.length} apps and ${containers} containers (HTTP)`, ms(resetMs)],
            ],
          },
        ],
        targets: [
          {
            what: `start ${containers} containers through the API vs raw docker run`,
            target: `≤ ${MAX_START_RATIO}×`,
            measured: `${ratioMedian.toFixed(2)}× (median)`,
            met: ratioMedian <= MAX_START_RATIO,
          },
          {
            what: `emulator RSS with ${containers} running containers (settled)`,
            target: `≤ ${MAX_RSS_MIB} MB`,
            measured: `${rss.rssMiB.toFixed(1)} MiB`,
            met: rss.rssMiB * 1.048576 <= MAX_RSS_MIB,
          },
          {
            what: `emulator CPU idle with ${containers} containers (default sampler)`,
            target: `≤ ${MAX_CPU_SHARE * 100} % of a core`,
            measured: `${(cpuShare * 100).toFixed(2)} %`,
            met: cpuShare <= MAX_CPU_SHARE,
          },
          {
            what: 'GET /v1/apps/:app/ps p99',
            target: `≤ ${MAX_PS_P99_MS} ms`,
            measured: ms(psP99),
            met: psP99 <= MAX_PS_P99_MS,
          },
          {
            what: `log line p99 to its WebSocket subscriber, ${containers} containers printing a line a second`,
            target: `≤ raw + ${MAX_LOG_P99_OVER_RAW_MS} ms`,
            measured: `${ms(emuP99)} vs raw ${ms(rawP99)}`,
            met: emuP99 <= rawP99 + MAX_LOG_P99_OVER_RAW_MS,
          },
        ],
        notes: [
          `reset() removes the ${apps.length} apps, their ${containers} containers and their images; ${ms(resetMs)} here.`,
          `Lines counted: emulator ${emuLog.ms.length}, raw ${rawLog.ms.length} over ${ms(logWindowMs)}; ${containers} containers at one line a second give ~${expected}.`,
        ],
      };
    } finally {
      await removeRaw().catch(() => undefined);
      if (emu && !resetDone)
        await fetch(`${emu.api}/_emulator/reset`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}` },
        }).catch(() => undefined);
      await client?.close();
      await emu?.stop();
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};
