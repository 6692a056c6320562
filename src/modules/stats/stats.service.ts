import { totalmem } from 'node:os';
import { ApiError } from '../../http/errors.ts';
import { type ContainerRuntime } from '../../runtime/runtime.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type RouterRecorder } from './router-records.ts';
import { effectiveSwapLimit, mapConcurrent, runningContainers, type Sampler } from './sampler.ts';
import { type Point, type StatsStore } from './stats.store.ts';

export const SERIES_METRICS = ['cpu', 'memory', 'swap', 'router'] as const;
export const STATUS_CODES: Record<string, [number, number]> = {
  all: [0, 1000],
  '1xx': [100, 200],
  '2xx': [200, 300],
  '3xx': [300, 400],
  '4xx': [400, 500],
  '5xx': [500, 600],
};
/** `since` when the client gives none: the dashboard's middle choice (3, 12, 24, 48, 72 h) — docs/fidelity.md. */
export const DEFAULT_SINCE_HOURS = 24;

export interface StatsServiceDeps {
  store: StatsStore;
  recorder: RouterRecorder;
  sampler: Sampler;
  runtime: ContainerRuntime;
  clock: Clock;
  instanceId: string;
  sampleMs: number;
  maxPoints: number;
  concurrency: number;
  /** The app's formation (process types and amounts), when the containers module knows it. */
  formation?: (appId: string) => { type: string; amount: number }[];
}

export interface SeriesQuery {
  type?: string;
  index?: string;
  since?: string;
  statusCode?: string;
}

const MINUTE = 60_000;

export function createStatsService(deps: StatsServiceDeps) {
  const { store, clock } = deps;

  function knownTypes(appId: string): Set<string> {
    const types = new Set(store.types(appId));
    for (const f of deps.formation?.(appId) ?? []) types.add(f.type);
    return types;
  }

  /** 404 `container_type` for a type the app never had; exported to the recommended values. */
  function checkType(appId: string, type: string): void {
    if (!knownTypes(appId).has(type)) throw ApiError.notFound('container_type');
  }

  function checkIndex(appId: string, type: string, raw: string): number {
    const index = /^[1-9]\d{0,5}$/.test(raw) ? Number(raw) : NaN;
    const amount = deps.formation?.(appId).find((f) => f.type === type)?.amount ?? 0;
    if (Number.isNaN(index) || (index > amount && !store.hasIndex(appId, type, index)))
      throw ApiError.notFound('container');
    return index;
  }

  function parseSince(raw: string | undefined): number {
    if (raw === undefined || raw === '' || raw === '0') return DEFAULT_SINCE_HOURS;
    if (!/^\d+$/.test(raw)) throw ApiError.invalid('since', 'must be a whole number of hours');
    return Number(raw);
  }

  /** Bucket width: the window split in maxPoints, in whole minutes once over a minute, never under the sample interval. */
  function bucketFor(windowMs: number, floor: number): number {
    const raw = windowMs / deps.maxPoints;
    const b = raw >= MINUTE ? Math.floor(raw / MINUTE) * MINUTE : Math.floor(raw);
    return Math.max(b, floor, 1);
  }

  const toJson = (points: Point[], scale = 1) => points.map((p) => ({ time: isoDate(p.t), value: p.v * scale }));

  return {
    checkType,
    knownTypes,

    /** #23 — a bare array of {time, value}: means per bucket over the type's containers (or one index). */
    series(app: AppRow, metric: string, q: SeriesQuery): { time: string; value: number }[] {
      if (!(SERIES_METRICS as readonly string[]).includes(metric)) throw ApiError.notFound('metric');
      const since = parseSince(q.since);
      const now = clock.now();
      const windowMs = since * 3_600_000;
      const from = now - windowMs;
      if (metric === 'router') {
        const range = STATUS_CODES[(q.statusCode ?? 'all').toLowerCase()];
        if (!range) throw ApiError.invalid('status_code', 'must be one of 1XX, 2XX, 3XX, 4XX, 5XX, all');
        deps.recorder.flush();
        // Requests per minute: buckets are at least one minute; empty buckets are zeros since the app exists.
        const bucket = bucketFor(windowMs, MINUTE);
        const counts = new Map(
          store.requestsSeries({ app: app.id, bucket, from, lo: range[0], hi: range[1] }).map((p) => [p.t, p.v]),
        );
        const out: { time: string; value: number }[] = [];
        const first = Math.floor(Math.max(from, app.created_at) / bucket) * bucket;
        for (let t = first; t <= now; t += bucket)
          out.push({ time: isoDate(t), value: ((counts.get(t) ?? 0) * MINUTE) / bucket });
        return out;
      }
      const bucket = bucketFor(windowMs, deps.sampleMs);
      let type: string | undefined;
      let index: number | undefined;
      if (q.type !== undefined) {
        checkType(app.id, q.type);
        type = q.type;
        if (q.index !== undefined) index = checkIndex(app.id, type, q.index);
      }
      const col = metric as 'cpu' | 'memory' | 'swap';
      // CPU is written in percent of one core, like cpu_usage; memory and swap in bytes.
      return toJson(store.series(col, { app: app.id, type, index, bucket, from }), col === 'cpu' ? 100 : 1);
    },

    /** #24 — figures read from the engine now, for every running container of the app. */
    async realtime(app: AppRow) {
      const containers = await runningContainers(deps.runtime, deps.instanceId, app.id);
      containers.sort((a, b) => (a.type === b.type ? a.index - b.index : a.type < b.type ? -1 : 1));
      const stats = await mapConcurrent(containers, deps.concurrency, (c) =>
        deps.runtime.stats(c.info.engineId).catch(() => null),
      );
      const out = [];
      for (let i = 0; i < containers.length; i++) {
        const s = stats[i];
        const c = containers[i];
        if (!s) continue; // stopped between the listing and the read
        deps.sampler.noteHighest(c.info.engineId, s);
        const high = deps.sampler.highest(c.info.engineId);
        // The CLI divides by both limits: never send 0 (an unlimited container reports the host's memory).
        const memoryLimit = s.memoryLimit || c.info.memoryLimit || totalmem();
        out.push({
          id: `${c.type}-${c.index}`,
          cpu_usage: Math.round(s.cpu * 100),
          memory_usage: s.memoryUsage,
          memory_limit: memoryLimit,
          highest_memory_usage: Math.max(high?.memory ?? 0, s.memoryMaxUsage, s.memoryUsage),
          swap_usage: s.swapUsage,
          swap_limit: effectiveSwapLimit(s, memoryLimit),
          highest_swap_usage: Math.max(high?.swap ?? 0, s.swapUsage),
        });
      }
      return { stats: out };
    },
  };
}

export type StatsService = ReturnType<typeof createStatsService>;
