import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { defined } from '../../shared/defined.ts';
import { prefixedUuid } from '../../shared/ids.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { EVENT_TYPES } from '../events/event-types.ts';
import { type EventsService } from '../events/events.service.ts';
import { type EventRow } from '../events/events.store.ts';
import { type Delivery, type EventPayload } from './delivery.ts';
import { type CreateNotifierInput, type TypeDataInput, type UpdateNotifierInput } from './notifiers.schemas.ts';
import { type NotifierRow, type NotifiersStore } from './notifiers.store.ts';
import { type PlatformName, platformById, platformByName, WEBHOOK_PLATFORMS } from './platforms.ts';

export interface NotifiersServiceDeps {
  db: Db;
  store: NotifiersStore;
  apps: AppsService;
  events: EventsService;
  clock: Clock;
  delivery: Delivery;
  userById: (id: string) => UserRow | undefined;
}

const EVENT_ID = (name: string) => `et-${name}`; // the ids of GET /v1/event_types
const EVENT_IDS = new Set(Object.keys(EVENT_TYPES).map(EVENT_ID));

export function notifierJson(n: NotifierRow, appName: string) {
  return {
    id: n.id,
    app_id: n.app_id,
    app: appName,
    name: n.name,
    active: n.active === 1,
    type: n.platform,
    platform_id: defined(platformByName(n.platform), `notification platform ${n.platform}`).id,
    send_all_alerts: n.send_all_alerts === 1,
    send_all_events: n.send_all_events === 1,
    selected_event_ids: JSON.parse(n.selected_event_ids) as string[],
    type_data: JSON.parse(n.type_data) as Record<string, unknown>,
    created_at: isoDate(n.created_at),
    updated_at: isoDate(n.updated_at),
  };
}

export function createNotifiersService(deps: NotifiersServiceDeps) {
  const { store, events, clock } = deps;

  function typeDataFor(
    platform: PlatformName,
    input: TypeDataInput,
    app: AppRow,
    previous?: Record<string, unknown>,
  ): Record<string, unknown> {
    if (WEBHOOK_PLATFORMS.has(platform)) {
      const url = input?.webhook_url ?? (previous?.webhook_url as string | undefined);
      if (!url)
        throw ApiError.invalid('type_data.webhook_url', `missing field: a ${platform} notifier sends to this URL`);
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw ApiError.invalid('type_data.webhook_url', 'must be an http or https URL');
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
        throw ApiError.invalid('type_data.webhook_url', 'must be an http or https URL');
      return { webhook_url: url };
    }
    const emails = input?.emails ?? (previous?.emails as string[] | undefined) ?? [];
    let userIds = input?.user_ids ?? (previous?.user_ids as string[] | undefined);
    for (const id of userIds ?? [])
      if (!deps.userById(id)) throw ApiError.invalid('type_data.user_ids', `"${id}" is not a user`);
    // Like the platform's default notifier, an e-mail notifier without recipients writes to the owner.
    if (!userIds?.length && emails.length === 0) userIds = [app.owner_id];
    return { user_ids: userIds ?? [], emails };
  }

  function selectedIds(
    input: { selected_event_ids?: string[] | null; selected_events?: string[] | null },
    previous: string[],
  ): string[] {
    if (input.selected_event_ids) {
      const bad = input.selected_event_ids.find((id) => !EVENT_IDS.has(id));
      if (bad) throw ApiError.invalid('selected_event_ids', `"${bad}" is not an event type id (GET /v1/event_types)`);
      return [...new Set(input.selected_event_ids)];
    }
    if (input.selected_events) {
      const bad = input.selected_events.find((n) => !(n in EVENT_TYPES));
      if (bad) throw ApiError.invalid('selected_events', `"${bad}" is not an event type name`);
      return [...new Set(input.selected_events.map(EVENT_ID))];
    }
    return previous;
  }

  function eventData(n: NotifierRow) {
    return {
      notifier_name: n.name,
      active: n.active === 1,
      send_all_events: n.send_all_events === 1,
      selected_events: (JSON.parse(n.selected_event_ids) as string[]).map((id) => id.replace(/^et-/, '')),
      notifier_type: n.platform,
      notifier_type_data: JSON.parse(n.type_data) as Record<string, unknown>,
      platform_name: n.platform,
    };
  }

  function find(app: AppRow, id: string): NotifierRow {
    const n = store.byId(app.id, id);
    if (!n) throw ApiError.notFound('notifier');
    return n;
  }

  /** The event as webhooks receive it. */
  function payload(e: EventRow): EventPayload {
    const u = e.user_id ? deps.userById(e.user_id) : undefined;
    return {
      id: e.id,
      created_at: isoDate(e.created_at),
      user: u ? { username: u.username, email: u.email, id: u.id } : null,
      app_id: e.app_id,
      app_name: e.app_name,
      type: e.type,
      type_data: JSON.parse(e.type_data) as Record<string, unknown>,
    };
  }

  const service = {
    list(user: UserRow, appKey: string) {
      const app = deps.apps.visibleApp(user, appKey);
      return store.forApp(app.id).map((n) => notifierJson(n, app.name));
    },
    show(user: UserRow, appKey: string, id: string) {
      const app = deps.apps.visibleApp(user, appKey);
      return notifierJson(find(app, id), app.name);
    },
    create(user: UserRow, appKey: string, input: CreateNotifierInput) {
      const app = deps.apps.visibleApp(user, appKey);
      const platform = (
        input.platform_id ? platformById(input.platform_id) : input.type ? platformByName(input.type) : undefined
      )?.name;
      if (!platform) {
        if (input.platform_id)
          throw ApiError.invalid(
            'platform_id',
            `"${input.platform_id}" is not a notification platform (GET /v1/notification_platforms)`,
          );
        throw ApiError.invalid('platform_id', 'missing field');
      }
      const now = clock.now();
      const row: NotifierRow = {
        id: prefixedUuid('no'),
        app_id: app.id,
        name: input.name,
        platform,
        active: input.active === false ? 0 : 1,
        send_all_alerts: input.send_all_alerts ? 1 : 0,
        send_all_events: input.send_all_events ? 1 : 0,
        selected_event_ids: JSON.stringify(selectedIds(input, [])),
        type_data: JSON.stringify(typeDataFor(platform, input.type_data, app)),
        created_at: now,
        updated_at: now,
      };
      tx(deps.db, () => {
        store.insert(row);
        events.record({ type: 'new_notifier', app, user, typeData: eventData(row) });
      });
      return notifierJson(row, app.name);
    },
    update(user: UserRow, appKey: string, id: string, input: UpdateNotifierInput) {
      const app = deps.apps.visibleApp(user, appKey);
      const n = find(app, id);
      const platform = n.platform as PlatformName;
      const row: NotifierRow = {
        ...n,
        name: input.name ?? n.name,
        active: input.active == null ? n.active : input.active ? 1 : 0,
        send_all_alerts: input.send_all_alerts == null ? n.send_all_alerts : input.send_all_alerts ? 1 : 0,
        send_all_events: input.send_all_events == null ? n.send_all_events : input.send_all_events ? 1 : 0,
        selected_event_ids: JSON.stringify(selectedIds(input, JSON.parse(n.selected_event_ids) as string[])),
        type_data: JSON.stringify(
          typeDataFor(platform, input.type_data, app, JSON.parse(n.type_data) as Record<string, unknown>),
        ),
        updated_at: clock.now(),
      };
      tx(deps.db, () => {
        store.update(row);
        events.record({ type: 'edit_notifier', app, user, typeData: eventData(row) });
      });
      return notifierJson(row, app.name);
    },
    delete(user: UserRow, appKey: string, id: string): void {
      const app = deps.apps.visibleApp(user, appKey);
      const n = find(app, id);
      tx(deps.db, () => {
        store.delete(n.id); // alert_notifiers rows go with it (FK cascade)
        events.record({ type: 'delete_notifier', app, user, typeData: eventData(n) });
      });
    },
    /** POST …/notifiers/:id/test — one notification shaped like an event, whatever the selection. */
    test(user: UserRow, appKey: string, id: string): void {
      const app = deps.apps.visibleApp(user, appKey);
      const n = find(app, id);
      const now = clock.now();
      deps.delivery.deliver(n, {
        id: 'test',
        created_at: isoDate(now),
        user: { username: user.username, email: user.email, id: user.id },
        app_id: app.id,
        app_name: app.name,
        type: 'test',
        type_data: { notifier_name: n.name, message: 'This is a test notification from the Scalingo emulator' },
      });
    },

    /** Every id must name a notifier of the app (alerts validation): 422 naming the field otherwise. */
    checkIds(appId: string, ids: string[]): void {
      for (const id of ids)
        if (!store.byId(appId, id)) throw ApiError.invalid('notifiers', `"${id}" is not a notifier of this app`);
    },

    /** Sends an alert event to the alert's active notifiers and to those taking every alert. */
    notifyAlert(e: EventRow, alertNotifierIds: string[]): void {
      const ids = new Set(alertNotifierIds);
      const p = payload(e);
      if (!e.app_id) return;
      for (const n of store.activeForApp(e.app_id))
        if (ids.has(n.id) || n.send_all_alerts === 1) deps.delivery.deliver(n, p);
    },

    /** events.onRecord listener: other app events go to the notifiers that selected them. */
    onEvent(e: EventRow): void {
      const appId = e.app_id;
      if (!appId || e.type === 'alert') return; // alerts are sent by the alert engine, to the alert's notifiers
      // A deleted app's notifiers went with its row, in the transaction that recorded the event (ON DELETE CASCADE):
      // there is no one to send it to, and no need to look.
      if (e.type === 'delete_app') return;
      // An app is created with no notifier (they are added to it afterwards): its new_app has no one to go to.
      if (e.type === 'new_app') return;
      // After the recording transaction: the event is complete and the caller is not slowed down.
      setImmediate(() => {
        if (!deps.db.open) return;
        const typeId = EVENT_ID(e.type);
        const targets = store
          .activeForApp(appId)
          .filter((n) => n.send_all_events === 1 || (JSON.parse(n.selected_event_ids) as string[]).includes(typeId));
        if (targets.length === 0) return;
        const p = payload(e);
        for (const n of targets) deps.delivery.deliver(n, p);
      });
    },
  };
  return service;
}

export type NotifiersService = ReturnType<typeof createNotifiersService>;
