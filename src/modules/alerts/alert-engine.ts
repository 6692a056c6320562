import { type Logger } from '../../shared/logger.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type EventsService } from '../events/events.service.ts';
import { type NotifiersService } from '../notifiers/notifiers.service.ts';
import { type RouterRecorder } from '../stats/router-records.ts';
import { type SampleRow, type StatsStore } from '../stats/stats.store.ts';
import { type AlertRow, type AlertsStore } from './alerts.store.ts';
import { metricText } from './alerts.view.ts';

/** The platform's own actor (row inserted by migration 005): alert events are "done" by it. */
export const PLATFORM_USER_ID = 'us-scalingo-platform';
const MINUTE = 60_000;

export interface AlertEngineDeps {
  alerts: AlertsStore;
  stats: StatsStore;
  recorder: RouterRecorder;
  notifiers: NotifiersService;
  events: EventsService;
  findApp: (id: string) => AppRow | undefined;
  logger: Logger;
}

interface TypeFigures {
  n: number;
  cpu: number;
  memFraction: number;
  swapFraction: number;
  memory: number;
  memoryLimit: number;
  swap: number;
  swapLimit: number;
}

interface AlertState {
  /** When the value went beyond the limit (null: within). */
  since: number | null;
  active: boolean;
  lastSent: number;
}

/** A metric's value for an alert: the fraction or figure compared to `limit`, and the raw one for the event. */
interface Reading {
  value: number;
  raw: number;
  rawLimit: number;
}

/**
 * Evaluates every enabled alert after each sample round, at the round's time (the injected clock):
 * resource metrics are the mean over the alert's container type in that round; router metrics cover
 * the last minute of router records. An alert fires once the value has stayed beyond its limit for
 * duration_before_trigger, reminds every remind_every while it stays there, and resolves when the value
 * comes back — each of these is an `alert` event (activated true/false) sent to the alert's notifiers.
 * State lives in memory: a restart forgets active alerts (docs/fidelity.md).
 */
export function createAlertEngine(deps: AlertEngineDeps) {
  const states = new Map<string, AlertState>();

  function aggregate(rows: SampleRow[]): Map<string, TypeFigures> {
    const byType = new Map<string, TypeFigures>();
    for (const r of rows) {
      const key = `${r.appId}\0${r.type}`;
      let f = byType.get(key);
      if (!f)
        byType.set(
          key,
          (f = { n: 0, cpu: 0, memFraction: 0, swapFraction: 0, memory: 0, memoryLimit: 0, swap: 0, swapLimit: 0 }),
        );
      f.n++;
      f.cpu += r.cpu;
      f.memFraction += r.memoryLimit > 0 ? r.memory / r.memoryLimit : 0;
      f.swapFraction += r.swapLimit > 0 ? r.swap / r.swapLimit : 0;
      f.memory += r.memory;
      f.memoryLimit += r.memoryLimit;
      f.swap += r.swap;
      f.swapLimit += r.swapLimit;
    }
    return byType;
  }

  function read(a: AlertRow, byType: Map<string, TypeFigures>, now: number): Reading | null {
    const f = byType.get(`${a.app_id}\0${a.container_type}`);
    switch (a.metric) {
      case 'cpu':
        return f ? { value: f.cpu / f.n, raw: (f.cpu / f.n) * 100, rawLimit: a.threshold * 100 } : null;
      case 'memory':
        return f
          ? { value: f.memFraction / f.n, raw: f.memory / f.n, rawLimit: (a.threshold * f.memoryLimit) / f.n }
          : null;
      case 'swap':
        return f
          ? { value: f.swapFraction / f.n, raw: f.swap / f.n, rawLimit: (a.threshold * f.swapLimit) / f.n }
          : null;
    }
    const w = deps.stats.window(a.app_id, now - MINUTE, now);
    let value: number;
    if (a.metric === 'all') value = w.n;
    else if (a.metric === '5XX') value = w.e;
    else if (a.metric === 'rpm_per_container') value = w.n / Math.max(1, f?.n ?? 1);
    else {
      const d = deps.stats.windowDurations(a.app_id, now - MINUTE, now);
      value = d.length ? d[Math.ceil(d.length * 0.95) - 1] : 0; // nearest-rank p95, ms
    }
    return { value, raw: value, rawLimit: a.threshold };
  }

  function send(a: AlertRow, r: Reading, activated: boolean): void {
    const app = deps.findApp(a.app_id);
    if (!app) return;
    const below = a.send_when_below === 1;
    const event = deps.events.record({
      type: 'alert',
      app,
      user: { id: PLATFORM_USER_ID },
      typeData: {
        sender_name: a.container_type,
        metric: a.metric,
        limit: a.threshold,
        limit_text: metricText(a.metric, a.threshold),
        value: r.value,
        value_text: metricText(a.metric, r.value),
        activated,
        send_when_below: below,
        raw_limit: r.rawLimit,
        raw_value: r.raw,
      },
    });
    deps.notifiers.notifyAlert(event, deps.alerts.notifierIds(a.id));
  }

  return {
    evaluate(rows: SampleRow[], now: number): void {
      const enabled = deps.alerts.enabled();
      const ids = new Set(enabled.map((a) => a.id));
      for (const id of states.keys()) if (!ids.has(id)) states.delete(id); // deleted or disabled
      if (enabled.length === 0) return;
      deps.recorder.flush();
      const byType = aggregate(rows);
      for (const a of enabled) {
        try {
          // A round taken before the alert existed says nothing of it: with a manual clock, a round in flight
          // when the alert is created may carry a time from before an advance.
          if (now < a.created_at) continue;
          const r = read(a, byType, now);
          if (!r) continue; // no running container of the type this round: nothing to judge
          let st = states.get(a.id);
          if (!st) states.set(a.id, (st = { since: null, active: false, lastSent: 0 }));
          const beyond = a.send_when_below === 1 ? r.value <= a.threshold : r.value >= a.threshold;
          if (!beyond) {
            st.since = null;
            if (st.active) {
              st.active = false;
              send(a, r, false);
            }
            continue;
          }
          st.since ??= now;
          if (!st.active) {
            if (now - st.since >= a.duration_before_trigger / 1e6) {
              st.active = true;
              st.lastSent = now;
              send(a, r, true);
            }
          } else if (a.remind_every && now - st.lastSent >= a.remind_every / 1e6) {
            st.lastSent = now;
            send(a, r, true);
          }
        } catch (err) {
          deps.logger.error({ err, alert: a.id }, 'alert evaluation failed');
        }
      }
    },
    /** For tests and /_emulator inspection: is the alert currently firing? */
    isActive: (alertId: string) => states.get(alertId)?.active ?? false,
  };
}

export type AlertEngine = ReturnType<typeof createAlertEngine>;
