import { z } from 'zod';
import { isoDateTime } from '../../http/api-schemas.ts';

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
  name: z
    .string({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a string') })
    .min(1, 'must not be empty'),
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

export const platformSearchQuery = z.object({
  name: z.string().optional().meta({ description: 'Platform name (email, slack, webhook, rocket_chat)' }),
});

// ---- Answers ----

const platformName = z.enum(['email', 'slack', 'webhook', 'rocket_chat']);

/** notifiers.service.ts `notifierJson`; type_data: the webhook URL, or the e-mail recipients. */
export const notifierResource = z
  .object({
    id: z.string(),
    app_id: z.string(),
    app: z.string(),
    name: z.string(),
    active: z.boolean(),
    type: platformName,
    platform_id: z.string(),
    send_all_alerts: z.boolean(),
    send_all_events: z.boolean(),
    selected_event_ids: z.array(z.string()),
    type_data: z.union([
      z.object({ webhook_url: z.string() }),
      z.object({ user_ids: z.array(z.string()), emails: z.array(z.string()) }),
    ]),
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .meta({ id: 'Notifier' });

export const notifierEnvelope = z.object({ notifier: notifierResource });
export const notifierList = z.object({ notifiers: z.array(notifierResource) });
/** POST …/notifiers/:id/test: an empty object once the test message is queued. */
export const notifierTestAnswer = z.strictObject({});

/** platforms.ts `platformJson`. */
export const notificationPlatformResource = z
  .object({
    id: z.string(),
    name: platformName,
    display_name: z.string(),
    logo_url: z.string(),
    description: z.string(),
    available_event_ids: z.array(z.string()),
  })
  .meta({ id: 'NotificationPlatform' });

export const notificationPlatformList = z.object({ notification_platforms: z.array(notificationPlatformResource) });
