// The autoscaler at work: after each stats round, every enabled autoscaler compares its metric with its
// target and scales its container type one step (doc.scalingo.com/platform/app/autoscaler):
// - the decision needs `rounds` consecutive readings beyond the target (the platform: two per-minute means);
// - resource metrics are the mean over the type's containers; router metrics cover the last minute;
// - scale out adds one container (rpm_per_container: as many as the traffic needs), never above max;
// - scale in removes one when the load spread on one container fewer would still stay under the target;
// - cool-downs: no scale out within `upCooldownMs` of a scale, no scale in within `downCooldownMs`;
// - a formation outside [min, max] is brought back into it at once.
// State (the consecutive readings) lives in memory; last_scale is stored.
import { type Logger } from '../../shared/logger.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type SampleRow } from '../stats/stats.store.ts';
import { RESOURCE_METRICS } from './autoscaler-metrics.ts';
import { type AutoscalerRow, type AutoscalersStore } from './autoscalers.store.ts';

const MINUTE = 60_000;

export interface AutoscalerEngineDeps {
  store: AutoscalersStore;
  /** Router traffic of an app in (from, to]: request count and sorted durations. */
  traffic: {
    window(appId: string, from: number, to: number): { n: number };
    windowDurations(appId: string, from: number, to: number): number[];
  };
  formation: (appId: string) => { type: string; amount: number }[];
  findApp: (id: string) => AppRow | undefined;
  /** Scales one type of an app as the autoscaler user; throws when the app cannot be scaled now (busy…). */
  scale: (app: AppRow, type: string, amount: number) => void;
  logger: Logger;
  upCooldownMs: number;
  downCooldownMs: number;
  rounds: number;
}

export function createAutoscalerEngine(deps: AutoscalerEngineDeps) {
  // autoscaler id → consecutive readings above (>0) or comfortably below (<0) the target.
  const streaks = new Map<string, number>();

  function reading(a: AutoscalerRow, rows: SampleRow[], amount: number, now: number): number | null {
    if (RESOURCE_METRICS.has(a.metric)) {
      const mine = rows.filter((r) => r.appId === a.app_id && r.type === a.container_type);
      if (mine.length === 0) return null;
      const each = (r: SampleRow) =>
        a.metric === 'cpu' ? r.cpu : a.metric === 'memory' ? frac(r.memory, r.memoryLimit) : frac(r.swap, r.swapLimit);
      return mine.reduce((s, r) => s + each(r), 0) / mine.length;
    }
    if (a.metric === 'p95_response_time') {
      const d = deps.traffic.windowDurations(a.app_id, now - MINUTE, now);
      return d.length ? d[Math.ceil(d.length * 0.95) - 1] : 0;
    }
    const n = deps.traffic.window(a.app_id, now - MINUTE, now).n;
    return a.metric === 'rpm_per_container' ? n / Math.max(1, amount) : n;
  }

  function decide(a: AutoscalerRow, value: number, amount: number, now: number): number {
    if (amount < a.min_containers) return a.min_containers;
    if (amount > a.max_containers) return a.max_containers;
    const streak = streaks.get(a.id) ?? 0;
    const sinceScale = a.last_scale === null ? Infinity : now - a.last_scale;
    if (value > a.target) {
      const s = Math.max(1, streak + 1);
      streaks.set(a.id, s);
      if (s < deps.rounds || sinceScale < deps.upCooldownMs || amount >= a.max_containers) return amount;
      // RPM per container can add several containers at once: as many as the traffic needs.
      const wanted = a.metric === 'rpm_per_container' ? Math.ceil((value * amount) / a.target) : amount + 1;
      return Math.min(a.max_containers, Math.max(amount + 1, wanted));
    }
    // Load per container if one container fewer shared it (router totals do not depend on the count).
    const spread =
      a.metric === 'all' || a.metric === 'p95_response_time'
        ? value
        : amount > 1
          ? (value * amount) / (amount - 1)
          : Infinity;
    if (spread < a.target) {
      const s = Math.min(-1, streak - 1);
      streaks.set(a.id, s);
      if (-s < deps.rounds || sinceScale < deps.downCooldownMs || amount <= a.min_containers) return amount;
      return amount - 1;
    }
    streaks.set(a.id, 0);
    return amount;
  }

  return {
    evaluate(rows: SampleRow[], now: number): void {
      const enabled = deps.store.enabled();
      const ids = new Set(enabled.map((a) => a.id));
      for (const id of streaks.keys()) if (!ids.has(id)) streaks.delete(id);
      for (const a of enabled) {
        try {
          const app = deps.findApp(a.app_id);
          const f = app && deps.formation(a.app_id).find((x) => x.type === a.container_type);
          if (!app || !f) continue; // never deployed: nothing to scale yet
          const value = reading(a, rows, f.amount, now);
          if (value === null && f.amount >= a.min_containers && f.amount <= a.max_containers) continue;
          const next = decide(a, value ?? 0, f.amount, now);
          if (next === f.amount) continue;
          deps.scale(app, a.container_type, next);
          deps.store.setLastScale(a.id, now);
          streaks.set(a.id, 0);
          deps.logger.info(
            { app: app.name, type: a.container_type, metric: a.metric, value, from: f.amount, to: next },
            'autoscaler scaled',
          );
        } catch (err) {
          // Busy (another operation), being deleted, no payment method…: tried again next round.
          deps.logger.debug({ err, autoscaler: a.id }, 'autoscaler could not scale this round');
        }
      }
    },
  };
}

const frac = (v: number, limit: number) => (limit > 0 ? v / limit : 0);

export type AutoscalerEngine = ReturnType<typeof createAutoscalerEngine>;
