import { z } from 'zod';

// Bodies as the clients send them: go-scalingo's newOutputNotifier (`{"notifier":{…, "platform_id", "type_data":
// {"webhook_url"?, "emails"?, "user_ids"?, "phone_number":""}, "selected_events"?: [names]}}`) and the npm
// client's CreateParams / UpdateParams (selected_event_ids). Unknown keys (id, app_id, created_at…) are ignored.

const typeData = z
  .object({
    webhook_url: z.string({ error: 'must be a string' }).optional(),
    emails: z.array(z.string().email('must be e-mail addresses')).nullish(),
    user_ids: z.array(z.string({ error: 'must be user ids' })).nullish(),
    phone_number: z.string().optional(),
  })
  .nullish();

const fields = {
  platform_id: z.string({ error: 'must be a string' }).optional(),
  /** Go sends the type ("" when not set); used when platform_id is missing. */
  type: z.string({ error: 'must be a string' }).optional(),
  name: z.string({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a string') }).min(1, 'must not be empty'),
  active: z.boolean({ error: 'must be a boolean' }).nullish(),
  send_all_alerts: z.boolean({ error: 'must be a boolean' }).nullish(),
  send_all_events: z.boolean({ error: 'must be a boolean' }).nullish(),
  selected_event_ids: z.array(z.string({ error: 'must be event type ids' })).nullish(),
  /** Deprecated form: event type names. */
  selected_events: z.array(z.string({ error: 'must be event type names' })).nullish(),
  type_data: typeData,
};

export const createNotifierSchema = z.object({ notifier: z.object(fields) });
export const updateNotifierSchema = z.object({ notifier: z.object({ ...fields, name: fields.name.optional() }) });

export type CreateNotifierInput = z.infer<typeof createNotifierSchema>['notifier'];
export type UpdateNotifierInput = z.infer<typeof updateNotifierSchema>['notifier'];
export type TypeDataInput = z.infer<typeof typeData>;
