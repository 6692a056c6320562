import { type Db } from '../../db/database.ts';

/** One container's figures at one sample, as stored (positional, to keep the sampler's hot path lean). */
export interface SampleRow {
  appId: string;
  type: string;
  index: number;
  time: number;
  cpu: number; // fraction of one core
  memory: number;
  memoryLimit: number;
  swap: number;
  swapLimit: number;
}

export type ResourceColumn = 'cpu' | 'memory' | 'swap';
export interface Point {
  t: number;
  v: number;
}
export type RouterRecordTuple = [
  appId: string,
  time: number,
  status: number,
  durationMs: number,
  container: string | null,
];

/**
 * Samples and router records. Maps (app, type, time, index) → container figures; (app, time) → requests.
 * Series are bucketed in SQL: (time / bucket) * bucket is the bucket start — integer division, hence the
 * CASTs (better-sqlite3 may bind a JS number as REAL).
 */
export function createStatsStore(db: Db) {
  const insertSample = db.prepare(
    'INSERT OR REPLACE INTO stats_samples (app_id, type, idx, time, cpu, memory, memory_limit, swap, swap_limit) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insertRequest = db.prepare(
    'INSERT INTO router_requests (app_id, time, status, duration_ms, container) VALUES (?, ?, ?, ?, ?)',
  );

  // The column name comes from the closed ResourceColumn set, never from a request.
  const seriesSql = (col: ResourceColumn, where: string) =>
    `SELECT (time / CAST(@bucket AS INTEGER)) * CAST(@bucket AS INTEGER) AS t, AVG(${col}) AS v FROM ` +
    `stats_samples WHERE app_id = @app ${where} AND time >= @from GROUP BY t ORDER BY t`;
  const series = {} as Record<
    ResourceColumn,
    { all: ReturnType<Db['prepare']>; type: ReturnType<Db['prepare']>; index: ReturnType<Db['prepare']> }
  >;
  for (const col of ['cpu', 'memory', 'swap'] as const) {
    series[col] = {
      all: db.prepare(seriesSql(col, '')),
      type: db.prepare(seriesSql(col, 'AND type = @type')),
      index: db.prepare(seriesSql(col, 'AND type = @type AND idx = @index')),
    };
  }

  const s = {
    types: db.prepare<[string], string>('SELECT DISTINCT type FROM stats_samples WHERE app_id = ?').pluck(),
    hasIndex: db
      .prepare<[string, string, number], number>(
        'SELECT 1 FROM stats_samples WHERE app_id = ? AND type = ? AND idx = ? LIMIT 1',
      )
      .pluck(),
    // Per-minute means over the type of the swap fraction (recommended value).
    swapFractionPerMinute: db.prepare<{ app: string; type: string; from: number }, { m: number; v: number }>(
      'SELECT time / 60000 AS m, AVG(CASE WHEN swap_limit > 0 THEN CAST(swap AS REAL) / swap_limit ELSE 0 END) AS v ' +
        'FROM stats_samples WHERE app_id = @app AND type = @type AND time >= @from GROUP BY m',
    ),
    containersPerMinute: db.prepare<{ app: string; type: string; from: number }, { m: number; n: number }>(
      'SELECT time / 60000 AS m, COUNT(DISTINCT idx) AS n FROM stats_samples WHERE app_id = @app AND type = @type AND time >= @from GROUP BY m',
    ),
    requestsSeries: db.prepare<{ app: string; bucket: number; from: number; lo: number; hi: number }, Point>(
      'SELECT (time / CAST(@bucket AS INTEGER)) * CAST(@bucket AS INTEGER) AS t, COUNT(*) AS v FROM router_requests ' +
        'WHERE app_id = @app AND time >= @from AND status >= @lo AND status < @hi GROUP BY t ORDER BY t',
    ),
    // Requests and 5XX per minute, minutes with traffic only.
    requestsPerMinute: db.prepare<{ app: string; from: number }, { m: number; n: number; e: number }>(
      'SELECT time / 60000 AS m, COUNT(*) AS n, SUM(status >= 500 AND status < 600) AS e FROM router_requests WHERE app_id = @app AND time >= @from GROUP BY m',
    ),
    // Nearest-rank p95 per minute: the ceil(0.95 × n)-th smallest duration of the minute.
    p95PerMinute: db.prepare<{ app: string; from: number }, { m: number; v: number }>(
      `SELECT m, d AS v FROM (SELECT time / 60000 AS m, duration_ms AS d, ROW_NUMBER() OVER (PARTITION BY time / 60000 ORDER BY duration_ms) AS rn,
        COUNT(*) OVER (PARTITION BY time / 60000) AS c FROM router_requests WHERE app_id = @app AND time >= @from) WHERE rn = (c * 95 + 99) / 100`,
    ),
    // Everything the alert engine needs about an app's traffic in one window.
    window: db.prepare<{ app: string; from: number; to: number }, { n: number; e: number }>(
      'SELECT COUNT(*) AS n, COALESCE(SUM(status >= 500 AND status < 600), 0) AS e FROM router_requests WHERE app_id = @app AND time > @from AND time <= @to',
    ),
    windowDurations: db
      .prepare<{ app: string; from: number; to: number }, number>(
        'SELECT duration_ms FROM router_requests WHERE app_id = @app AND time > @from AND time <= @to ORDER BY duration_ms',
      )
      .pluck(),
    pruneSamples: db.prepare('DELETE FROM stats_samples WHERE time < ?'),
    pruneRequests: db.prepare('DELETE FROM router_requests WHERE time < ?'),
  };

  return {
    /** Caller wraps in a transaction (one per sample round). */
    insertSample: (r: SampleRow) =>
      void insertSample.run(r.appId, r.type, r.index, r.time, r.cpu, r.memory, r.memoryLimit, r.swap, r.swapLimit),
    insertRequest: (r: RouterRecordTuple) => void insertRequest.run(r),
    series(
      col: ResourceColumn,
      q: { app: string; type?: string; index?: number; bucket: number; from: number },
    ): Point[] {
      const st = q.type === undefined ? series[col].all : q.index === undefined ? series[col].type : series[col].index;
      return st.all(q) as Point[];
    },
    types: (appId: string) => s.types.all(appId),
    hasIndex: (appId: string, type: string, index: number) => s.hasIndex.get(appId, type, index) === 1,
    swapFractionPerMinute: (app: string, type: string, from: number) =>
      s.swapFractionPerMinute.all({ app, type, from }),
    containersPerMinute: (app: string, type: string, from: number) => s.containersPerMinute.all({ app, type, from }),
    requestsSeries: (q: { app: string; bucket: number; from: number; lo: number; hi: number }) =>
      s.requestsSeries.all(q),
    requestsPerMinute: (app: string, from: number) => s.requestsPerMinute.all({ app, from }),
    p95PerMinute: (app: string, from: number) => s.p95PerMinute.all({ app, from }),
    window: (app: string, from: number, to: number) => s.window.get({ app, from, to }) ?? { n: 0, e: 0 },
    windowDurations: (app: string, from: number, to: number) => s.windowDurations.all({ app, from, to }),
    prune(before: number): void {
      s.pruneSamples.run(before);
      s.pruneRequests.run(before);
    },
  };
}

export type StatsStore = ReturnType<typeof createStatsStore>;
