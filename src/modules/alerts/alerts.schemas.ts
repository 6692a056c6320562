import { z } from 'zod';
import { isoDateTime } from '../../http/api-schemas.ts';
import { ALERT_METRICS } from './alert-metrics.ts';
import { durationInput } from './durations.ts';

const str = (what = 'a string') =>
  z.string({ error: (i) => (i.input === undefined ? 'missing field' : `must be ${what}`) });

/** Integer of nanoseconds or Go duration text ("5m0s"); "" means unset (null). */
const duration = z
  .unknown()
  .transform((v, ctx) => {
    if (v === undefined || v === null) return undefined;
    const ns = durationInput(v);
    if (ns === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be a duration: an integer of nanoseconds or a Go duration such as "5m0s"',
      });
      return z.NEVER;
    }
    return ns;
  })
  .optional();

const fields = {
  container_type: str().min(1, 'must not be empty'),
  metric: z.enum(ALERT_METRICS, {
    error: (i) => (i.input === undefined ? 'missing field' : `must be one of ${ALERT_METRICS.join(', ')}`),
  }),
  limit: z
    .number({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a number') })
    .min(0, 'must not be negative'),
  notifiers: z.array(str('a notifier id')).nullish(),
  send_when_below: z.boolean().nullish(),
  disabled: z.boolean().nullish(),
  duration_before_trigger: duration,
  remind_every: duration,
  metadata: z.record(z.string(), z.unknown()).nullish(),
};

// Unknown keys are ignored: the Go client sends the whole Alert (id, app_id, created_at…) on create.
export const createAlertSchema = z.object({ alert: z.object(fields) });
export const updateAlertSchema = z.object({
  alert: z.object({
    ...fields,
    container_type: fields.container_type.optional(),
    metric: fields.metric.optional(),
    limit: fields.limit.optional(),
  }),
});

export type CreateAlertInput = z.infer<typeof createAlertSchema>['alert'];
export type UpdateAlertInput = z.infer<typeof updateAlertSchema>['alert'];

// ---- Answers ----

/** alerts.view.ts `alertJson`: duration_before_trigger an integer of ns, remind_every a Go duration ("" when unset). */
export const alertResource = z
  .object({
    id: z.string(),
    app_id: z.string(),
    created_at: isoDateTime,
    updated_at: isoDateTime,
    deleted_at: z.null(),
    container_type: z.string(),
    disabled: z.boolean(),
    metric: z.enum(ALERT_METRICS),
    limit: z.number(),
    send_when_below: z.boolean(),
    duration_before_trigger: z.number().int(),
    remind_every: z.string(),
    metadata: z.record(z.string(), z.unknown()),
    notifiers: z.array(z.string()),
  })
  .meta({ id: 'Alert' });

export const alertEnvelope = z.object({ alert: alertResource });
export const alertList = z.object({ alerts: z.array(alertResource) });
