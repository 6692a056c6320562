import { ApiError } from '../../http/errors.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { defined } from '../../shared/defined.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type RouterRecorder } from './router-records.ts';
import { type StatsService } from './stats.service.ts';
import { type StatsStore } from './stats.store.ts';

export const RECOMMENDED_METRICS = [
  'cpu',
  'memory',
  'swap',
  '5XX',
  'all',
  'rpm_per_container',
  'p95_response_time',
] as const;
const RESOURCE = new Set(['cpu', 'memory', 'swap']);
const DAY = 86_400_000;
/** doc.scalingo.com autoscaler page: "The recommended value for the CPU and the RAM usage is fixed and is 90%". */
const FIXED_RESOURCE_TARGET = 0.9;

export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/**
 * #25 — the value the platform suggests as an autoscaling target: fixed 0.9 for cpu and memory, and for
 * the other metrics the median over the last 24 hours of per-minute figures (minutes with data only).
 * Formulas: docs/fidelity.md "Stats, alerts and notifiers".
 */
export function createRecommended(deps: {
  store: StatsStore;
  recorder: RouterRecorder;
  stats: StatsService;
  clock: Clock;
  formation?: (appId: string) => { type: string; amount: number }[];
}) {
  const { store } = deps;

  function webContainers(app: AppRow, from: number): (minute: number) => number {
    const perMinute = new Map(store.containersPerMinute(app.id, 'web', from).map((r) => [r.m, r.n]));
    const fallback =
      deps.formation?.(app.id).find((f) => f.type === 'web')?.amount || Math.max(1, ...perMinute.values());
    return (m) => perMinute.get(m) ?? fallback;
  }

  function compute(app: AppRow, metric: string, containerType: string | undefined, from: number): number {
    switch (metric) {
      case 'cpu':
      case 'memory':
        return FIXED_RESOURCE_TARGET;
      case 'swap':
        return median(
          store.swapFractionPerMinute(app.id, defined(containerType, 'container_type'), from).map((r) => r.v),
        );
      case 'all':
        return median(store.requestsPerMinute(app.id, from).map((r) => r.n));
      case '5XX':
        return median(store.requestsPerMinute(app.id, from).map((r) => r.e));
      case 'rpm_per_container': {
        const containers = webContainers(app, from);
        return median(store.requestsPerMinute(app.id, from).map((r) => r.n / containers(r.m)));
      }
      default: // p95_response_time, in milliseconds
        return median(store.p95PerMinute(app.id, from).map((r) => r.v));
    }
  }

  return {
    value(app: AppRow, metric: string, containerType: string | undefined): { time: string; value: number } {
      if (!(RECOMMENDED_METRICS as readonly string[]).includes(metric)) throw ApiError.notFound('metric');
      if (RESOURCE.has(metric)) {
        if (!containerType)
          throw ApiError.invalid(
            'container_type',
            'missing field: it is required for the cpu, memory and swap metrics',
          );
        deps.stats.checkType(app.id, containerType);
      } else deps.recorder.flush();
      const now = deps.clock.now();
      // The platform computes it daily: its sample's time is a midnight UTC (2018-05-24T00:00:00Z).
      return { time: isoDate(Math.floor(now / DAY) * DAY), value: compute(app, metric, containerType, now - DAY) };
    },
  };
}

export type Recommended = ReturnType<typeof createRecommended>;
