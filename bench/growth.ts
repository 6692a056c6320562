import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import {
  archiveOf,
  deleteApp,
  instanceIdOf,
  postDeployment,
  removeInstanceContainers,
  untilRunning,
} from './lib/app-deploy.ts';
import { ensureEmulatorBundle } from './lib/bundle.ts';
import { ApiClient } from './lib/emulator-client.ts';
import { type Child, spawnEmulator } from './lib/processes.ts';
import { int, median, ms, percentile } from './lib/stats.ts';
import { type BenchContext, type Result, type Section, type Table } from './lib/types.ts';

const FLAT_MAX = 1.5;
const PROBE = 'growth-probe';

interface Endpoint {
  key: string;
  label: string;
  path: string;
  /** Part of the "flat" target (GET /v1/apps is not: it lists every app, unpaginated). */
  flat: boolean;
}

const ENDPOINTS: Endpoint[] = [
  { key: 'list', label: 'GET /v1/apps (every app, unpaginated)', path: '/v1/apps', flat: false },
  { key: 'show', label: 'GET /v1/apps/:app', path: `/v1/apps/${PROBE}`, flat: true },
  {
    key: 'formation',
    label: 'GET /v1/apps/:app/containers (formation)',
    path: `/v1/apps/${PROBE}/containers`,
    flat: true,
  },
  { key: 'ps', label: 'GET /v1/apps/:app/ps (asks Docker)', path: `/v1/apps/${PROBE}/ps`, flat: true },
  { key: 'app-events', label: 'GET /v1/apps/:app/events (page 1)', path: `/v1/apps/${PROBE}/events`, flat: true },
  { key: 'events', label: 'GET /v1/events (page 1)', path: '/v1/events', flat: true },
];

interface Figures {
  p50: number;
  p99: number;
  n: number;
  bytes: number;
}

/**
 * Sequential GETs over one keep-alive connection (latency, not throughput): a few uncounted, then
 * up to `max` or for `budgetMs`, at least `min`. Every answer must be 200.
 */
async function latency(
  pool: Pool,
  auth: string,
  path: string,
  o: { max: number; min: number; budgetMs: number; warmup: number; warmupMs: number },
): Promise<Figures> {
  const one = async () => {
    const t0 = performance.now();
    const res = await pool.request({
      method: 'GET',
      path,
      headers: { authorization: auth, accept: 'application/json' },
    });
    const body = await res.body.arrayBuffer();
    const t = performance.now() - t0;
    if (res.statusCode !== 200)
      throw new Error(`GET ${path}: ${res.statusCode} ${Buffer.from(body).toString().slice(0, 200)}`);
    return { t, bytes: body.byteLength };
  };
  // Warm-up: JIT and SQLite's page cache (the emulator restarted before the last stage), bounded in time.
  const w0 = performance.now();
  for (let i = 0; i < o.warmup && (i === 0 || performance.now() - w0 < o.warmupMs); i++) await one();
  const times: number[] = [];
  let bytes = 0;
  const t0 = performance.now();
  while (times.length < o.max && (times.length < o.min || performance.now() - t0 < o.budgetMs)) {
    const r = await one();
    times.push(r.t);
    bytes = r.bytes;
  }
  return { p50: median(times), p99: percentile(times, 99), n: times.length, bytes };
}

/** POST /v1/apps for `count` new apps, `parallel` clients at once; returns apps/s. */
async function createApps(client: ApiClient, from: number, count: number, parallel: number): Promise<number> {
  let next = from;
  const end = from + count;
  const t0 = performance.now();
  const worker = async () => {
    while (next < end) {
      const i = next++;
      await client.expect('POST', '/v1/apps', 201, { app: { name: `growth-${String(i).padStart(6, '0')}` } });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return count / ((performance.now() - t0) / 1000);
}

/**
 * Events written with the emulator's own events store (src/modules/events/events.store.ts, its
 * prepared INSERT), into its data dir while it is stopped: spread over every app, newest last.
 */
async function seedEvents(emulatorDir: string, dataDir: string, total: number): Promise<number> {
  const { createEventsStore } = (await import(
    pathToFileURL(join(emulatorDir, 'src/modules/events/events.store.ts')).href
  )) as typeof import('../src/modules/events/events.store.ts');
  const { objectId } = (await import(
    pathToFileURL(join(emulatorDir, 'src/shared/ids.ts')).href
  )) as typeof import('../src/shared/ids.ts');
  const db = new Database(join(dataDir, 'emulator.sqlite'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const store = createEventsStore(db as never);
    const apps = db.prepare('SELECT id, name, owner_id FROM apps ORDER BY name').all() as {
      id: string;
      name: string;
      owner_id: string;
    }[];
    const types = ['new_variable', 'edit_variable', 'restart', 'scale'];
    const t0 = performance.now();
    const start = Date.now() - total; // one event a millisecond, ending now
    const batch = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const app = apps[i % apps.length];
        const at = start + i;
        store.insert({
          id: objectId(at),
          type: types[i % types.length],
          app_id: app.id,
          app_name: app.name,
          user_id: app.owner_id,
          created_at: at,
          type_data: JSON.stringify({ name: `VAR_${i % 50}`, value: 'x' }),
        });
      }
    });
    for (let i = 0; i < total; i += 20_000) batch(i, Math.min(total, i + 20_000));
    db.pragma('wal_checkpoint(TRUNCATE)');
    return performance.now() - t0;
  } finally {
    db.close();
  }
}

/**
 * Issue 16, growth: the latency of the listing and reading endpoints at 10, 1,000 and 10,000 apps,
 * then with 1,000,000 events, in one emulator (bundle, data dir) whose state grows between stages.
 */
export const section: Section = {
  name: 'growth',
  description: 'latency of apps/app/containers/ps/events at 10, 1,000, 10,000 apps and 1M events (issue 16)',
  async run(ctx: BenchContext): Promise<Result> {
    const tmp = mkdtempSync(join(tmpdir(), 'bench-growth-'));
    const dataDir = join(tmp, 'data');
    mkdirSync(dataDir);
    // Quick: smaller sizes (a smoke run of the method, not the issue's figures).
    const stages = ctx.quick ? [10, 300, 2000] : [10, 1000, 10_000];
    const events = ctx.quick ? 50_000 : 1_000_000;
    const rounds = ctx.quick ? 1 : ctx.rounds;
    // The warm-up matters: the first stage runs right after the probe's deployment and the last right after a
    // restart; a cold process there would make the ratios look better (or worse) than the code is.
    const load = ctx.quick
      ? { max: 100, min: 3, budgetMs: 1000, warmup: 300, warmupMs: 1500 }
      : { max: 300, min: 10, budgetMs: 4000, warmup: 1000, warmupMs: 3000 };
    let emu: Child | undefined;
    let client: ApiClient | undefined;
    let probeId: string | undefined;
    let instanceId: string | null = null;
    const results = new Map<string, Map<string, Figures[]>>(); // stage → endpoint → rounds
    const seeding: string[] = [];
    const start = async () => {
      emu = await spawnEmulator({ emulatorDir: ctx.emulatorDir, dataDir, bundled: true });
      client = new ApiClient(emu.api, 8);
      await client.exchange(emu.token!);
    };
    const stop = async () => {
      await client?.close();
      await emu?.stop();
    };
    const measure = async (stage: string) => {
      const pool = new Pool(emu!.api, { connections: 1, pipelining: 1, keepAliveTimeout: 30_000 });
      const per = new Map<string, Figures[]>(ENDPOINTS.map((e) => [e.key, []]));
      try {
        // Every endpoint warmed up before any is measured (JIT, statement caches, SQLite pages).
        for (const e of ENDPOINTS) await latency(pool, client!.authHeader, e.path, { ...load, max: 0, min: 0 });
        for (let round = 1; round <= rounds; round++) {
          for (const e of ENDPOINTS) per.get(e.key)!.push(await latency(pool, client!.authHeader, e.path, load));
        }
      } finally {
        await pool.close();
      }
      results.set(stage, per);
      ctx.log(
        `growth: ${stage}: ${ENDPOINTS.map((e) => `${e.key} ${ms(median(per.get(e.key)!.map((f) => f.p50)))}`).join(', ')}`,
      );
    };
    try {
      ensureEmulatorBundle(ctx.emulatorDir);
      await start();
      instanceId = instanceIdOf(dataDir);
      // The probe app: deployed (one web container), so formation and ps list something real.
      probeId = (
        JSON.parse(await client!.expect('POST', '/v1/apps', 201, { app: { name: PROBE } })) as { app: { id: string } }
      ).app.id;
      await postDeployment(
        client!,
        PROBE,
        await archiveOf(join(ctx.repoDir, 'fixtures/apps/busybox-web'), join(tmp, 'probe.tar.gz')),
      );
      await untilRunning(client!, PROBE);
      let apps = 1;
      for (const target of stages) {
        const rate = await createApps(client!, apps, target - apps, 8);
        seeding.push(
          `${int(target - apps)} apps created through the API (POST /v1/apps, 8 parallel clients) at ${int(rate)} apps/s`,
        );
        apps = target;
        await measure(`${int(target)} apps`);
      }
      // A million events: through the API that is a million event-recording calls (tens of minutes on this
      // machine), so they are written with the emulator's own store while it is stopped, then it restarts.
      await stop();
      const seedMs = await seedEvents(ctx.emulatorDir, dataDir, events);
      seeding.push(
        `${int(events)} events written with the emulator's own events store (its prepared INSERT, 20,000 a transaction) into the stopped emulator's data dir in ${(seedMs / 1000).toFixed(1)} s, spread evenly over the ${int(apps)} apps (${int(events / apps)} each), then the emulator restarted on it`,
      );
      await start();
      await measure(`${int(apps)} apps + ${int(events)} events`);
      return report(results, stages, apps, events, rounds, load, seeding);
    } finally {
      await deleteApp(client, PROBE, probeId);
      await stop();
      await removeInstanceContainers(instanceId);
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};

function report(
  results: Map<string, Map<string, Figures[]>>,
  stages: number[],
  apps: number,
  events: number,
  rounds: number,
  load: { max: number; min: number; budgetMs: number; warmup: number; warmupMs: number },
  seeding: string[],
): Result {
  const stageNames = [...results.keys()];
  const p50 = (stage: string, key: string) =>
    median(
      results
        .get(stage)!
        .get(key)!
        .map((f) => f.p50),
    );
  const p99 = (stage: string, key: string) =>
    median(
      results
        .get(stage)!
        .get(key)!
        .map((f) => f.p99),
    );
  const bytes = (stage: string, key: string) => results.get(stage)!.get(key)!.at(-1)!.bytes;
  const first = stageNames[0];
  const tables: Table[] = [
    {
      caption: `Latency p50 / p99 (median of ${rounds} round(s)) and body size`,
      headers: ['endpoint', ...stageNames],
      rows: ENDPOINTS.map((e) => [
        e.label,
        ...stageNames.map((s) => `${ms(p50(s, e.key))} / ${ms(p99(s, e.key))} (${int(bytes(s, e.key))} B)`),
      ]),
    },
    {
      caption: `Ratio of p50 to the ${first} stage`,
      headers: ['endpoint', ...stageNames.slice(1)],
      rows: ENDPOINTS.map((e) => [
        e.label,
        ...stageNames.slice(1).map((s) => `${(p50(s, e.key) / p50(first, e.key)).toFixed(2)}×`),
      ]),
    },
  ];
  const listPerApp = stageNames
    .slice(0, stages.length)
    .map((s, i) => `${s}: ${((p50(s, 'list') * 1000) / stages[i]).toFixed(1)} µs an app`);
  const last = stageNames[stages.length - 1];
  const withEvents = stageNames[stages.length];
  const targets = ENDPOINTS.filter((e) => e.flat).flatMap((e) => {
    const a = p50(last, e.key) / p50(first, e.key);
    const b = p50(withEvents, e.key) / p50(first, e.key);
    return [
      {
        what: `${e.label}: ${last} ÷ ${first}`,
        target: `≤ ${FLAT_MAX}×`,
        measured: `${a.toFixed(2)}× (${ms(p50(first, e.key))} → ${ms(p50(last, e.key))}, p50)`,
        met: a <= FLAT_MAX,
      },
      {
        what: `${e.label}: ${withEvents} ÷ ${first}`,
        target: `≤ ${FLAT_MAX}×`,
        measured: `${b.toFixed(2)}× (→ ${ms(p50(withEvents, e.key))}, p50)`,
        met: b <= FLAT_MAX,
      },
    ];
  });
  return {
    title: `Growth: latency at ${stages.map(int).join(', ')} apps and with ${int(events)} events`,
    method:
      `One emulator (npm start bundle, data dir) whose state grows between stages; the probe app \`${PROBE}\` deployed by archive first (busybox-web, one web container), ` +
      `the other apps empty. Per stage and round, each endpoint is asked sequentially over one keep-alive connection (undici, Bearer): uncounted warm-up requests ` +
      `(a pass over every endpoint first, then before each measurement: up to ${load.warmup} requests or ${load.warmupMs / 1000} s), then up to ${load.max} requests or ${load.budgetMs / 1000} s (at least ${load.min}); latency is the client's (request sent → body read), every answer 200. Seeding: ${seeding.join('; ')}. ` +
      `Events listings ask page 1 at the default per_page. ${rounds} round(s) per stage, endpoints interleaved.`,
    tables,
    targets,
    notes: [
      `GET /v1/apps lists every app of the user in one answer (the platform's API has no pagination on it, developers.scalingo.com "List your applications"; the emulator does the same), so its body and time grow with the number of apps by design; it is outside the flat target. Time per listed app: ${listPerApp.join(', ')}.`,
      `${int(apps)} apps in all; ${int(events)} events is the last stage.`,
    ],
  };
}
