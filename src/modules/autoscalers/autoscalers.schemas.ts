import { z } from 'zod';
import { isoDateTime } from '../../http/api-schemas.ts';
import { AUTOSCALER_METRICS } from './autoscaler-metrics.ts';

const need = (what: string) => (i: { input: unknown }) => (i.input === undefined ? 'missing field' : `must be ${what}`);
const metric = z.enum(AUTOSCALER_METRICS, {
  error: (i) => (i.input === undefined ? 'missing field' : `must be one of ${AUTOSCALER_METRICS.join(', ')}`),
});
const target = z.number({ error: need('a number') }).positive('must be greater than 0');
const count = z.number({ error: need('a whole number') }).int('must be a whole number');

// go-scalingo's AutoscalerAdd sends the whole Autoscaler struct (id "", app_id "", disabled false): extra keys ignored.
export const createAutoscalerSchema = z.object({
  autoscaler: z.object({
    container_type: z
      .string({ error: need('a string') })
      .min(1, "can't be blank")
      .max(64, 'is too long'),
    metric,
    target,
    min_containers: count,
    max_containers: count,
    disabled: z.boolean().nullish(),
  }),
});

// go-scalingo's AutoscalerUpdate sends the fields unwrapped; the npm client and the reference wrap them
// in `autoscaler`. Both are read (routes unwrap first).
export const updateAutoscalerSchema = z.object({
  autoscaler: z.object({
    metric: metric.nullish(),
    target: target.nullish(),
    min_containers: count.nullish(),
    max_containers: count.nullish(),
    disabled: z.boolean().nullish(),
  }),
});

export type CreateAutoscalerInput = z.infer<typeof createAutoscalerSchema>['autoscaler'];
export type UpdateAutoscalerInput = z.infer<typeof updateAutoscalerSchema>['autoscaler'];

// ---- Answers ----

/** autoscalers.service.ts `toJson`. */
export const autoscalerResource = z
  .object({
    id: z.string(),
    app_id: z.string(),
    container_type: z.string(),
    metric: z.enum(AUTOSCALER_METRICS),
    target: z.number(),
    target_text: z.string(),
    min_containers: z.number().int(),
    max_containers: z.number().int(),
    disabled: z.boolean(),
    created_at: isoDateTime,
    updated_at: isoDateTime,
    last_scale: isoDateTime.nullable(),
  })
  .meta({ id: 'Autoscaler' });

export const autoscalerEnvelope = z.object({ autoscaler: autoscalerResource });
export const autoscalerList = z.object({ autoscalers: z.array(autoscalerResource) });
