import { isoDate } from '../../shared/clock.ts';
import { RESOURCE_METRICS } from './alert-metrics.ts';
import { type AlertRow } from './alerts.store.ts';
import { formatGoDuration } from './durations.ts';

/**
 * The Alert resource as go-scalingo decodes it: duration_before_trigger an integer of ns,
 * remind_every a Go duration string ("" when unset), notifiers the ids (docs/research/clients-runtime.md §5).
 */
export function alertJson(a: AlertRow, notifiers: string[]) {
  return {
    id: a.id,
    app_id: a.app_id,
    created_at: isoDate(a.created_at),
    updated_at: isoDate(a.updated_at),
    deleted_at: null,
    container_type: a.container_type,
    disabled: a.disabled === 1,
    metric: a.metric,
    limit: a.threshold,
    send_when_below: a.send_when_below === 1,
    duration_before_trigger: a.duration_before_trigger,
    remind_every: a.remind_every === null ? '' : formatGoDuration(a.remind_every),
    metadata: JSON.parse(a.metadata) as Record<string, unknown>,
    notifiers,
  };
}

/** Human text of a metric value, as the platform's `limit_text` / `value_text`. */
export function metricText(metric: string, value: number): string {
  if (RESOURCE_METRICS.has(metric)) return `${round(value * 100)}%`;
  if (metric === 'p95_response_time') return `${round(value)} ms`;
  return `${round(value)} RPM`;
}

const round = (v: number) => Math.round(v * 100) / 100;

/** type_data of new_alert and edit_alert (go-scalingo EventNewAlertTypeData). */
export function alertEventData(a: AlertRow) {
  return {
    container_type: a.container_type,
    metric: a.metric,
    limit: a.threshold,
    limit_text: metricText(a.metric, a.threshold),
    send_when_below: a.send_when_below === 1,
  };
}
