import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock } from '../../shared/clock.ts';
import { prefixedUuid } from '../../shared/ids.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { type EventsService } from '../events/events.service.ts';
import { type NotifiersService } from '../notifiers/notifiers.service.ts';
import { RESOURCE_METRICS } from './alert-metrics.ts';
import { type CreateAlertInput, type UpdateAlertInput } from './alerts.schemas.ts';
import { type AlertRow, type AlertsStore } from './alerts.store.ts';
import { alertEventData, alertJson } from './alerts.view.ts';

export interface AlertsServiceDeps {
  db: Db;
  store: AlertsStore;
  apps: AppsService;
  events: EventsService;
  notifiers: NotifiersService;
  clock: Clock;
}

/** Alerts #26–#30: rules stored per app; the alert engine evaluates the enabled ones at every sample. */
export function createAlertsService(deps: AlertsServiceDeps) {
  const { store, events, clock } = deps;

  const json = (a: AlertRow) => alertJson(a, store.notifierIds(a.id));

  function find(app: AppRow, id: string): AlertRow {
    const a = store.byId(app.id, id);
    if (!a) throw ApiError.notFound('alert');
    return a;
  }

  // A limit over 1 on a resource metric is almost always a percentage typed by mistake (80 for 0.8).
  function checkLimit(metric: string, limit: number): void {
    if (RESOURCE_METRICS.has(metric) && limit > 1) {
      throw ApiError.invalid('limit', `is a fraction for the ${metric} metric: 0.8 means 80% (${limit} given)`);
    }
  }

  return {
    list(user: UserRow, appKey: string) {
      const app = deps.apps.visibleApp(user, appKey);
      return store.forApp(app.id).map(json);
    },

    show(user: UserRow, appKey: string, id: string) {
      return json(find(deps.apps.visibleApp(user, appKey), id));
    },

    create(user: UserRow, appKey: string, input: CreateAlertInput) {
      const app = deps.apps.visibleApp(user, appKey);
      checkLimit(input.metric, input.limit);
      const notifierIds = [...new Set(input.notifiers ?? [])];
      deps.notifiers.checkIds(app.id, notifierIds);
      const now = clock.now();
      const row: AlertRow = {
        id: prefixedUuid('al'),
        app_id: app.id,
        container_type: input.container_type,
        metric: input.metric,
        threshold: input.limit,
        disabled: input.disabled ? 1 : 0,
        send_when_below: input.send_when_below ? 1 : 0,
        duration_before_trigger: input.duration_before_trigger ?? 0,
        remind_every: input.remind_every ?? null,
        metadata: JSON.stringify(input.metadata ?? {}),
        created_at: now,
        updated_at: now,
      };
      tx(deps.db, () => {
        store.insert(row);
        store.setNotifiers(row.id, notifierIds);
        events.record({ type: 'new_alert', app, user, typeData: alertEventData(row) });
      });
      return json(row);
    },

    /** PATCH and PUT: every field optional; `remind_every: ""` clears the reminder. */
    update(user: UserRow, appKey: string, id: string, input: UpdateAlertInput) {
      const app = deps.apps.visibleApp(user, appKey);
      const a = find(app, id);
      const row: AlertRow = {
        ...a,
        container_type: input.container_type ?? a.container_type,
        metric: input.metric ?? a.metric,
        threshold: input.limit ?? a.threshold,
        disabled: input.disabled == null ? a.disabled : input.disabled ? 1 : 0,
        send_when_below: input.send_when_below == null ? a.send_when_below : input.send_when_below ? 1 : 0,
        duration_before_trigger:
          input.duration_before_trigger === undefined
            ? a.duration_before_trigger
            : (input.duration_before_trigger ?? 0),
        remind_every: input.remind_every === undefined ? a.remind_every : input.remind_every,
        metadata: input.metadata == null ? a.metadata : JSON.stringify(input.metadata),
        updated_at: clock.now(),
      };
      checkLimit(row.metric, row.threshold);
      const notifierIds = input.notifiers == null ? null : [...new Set(input.notifiers)];
      if (notifierIds) deps.notifiers.checkIds(app.id, notifierIds);
      tx(deps.db, () => {
        store.update(row);
        if (notifierIds) store.setNotifiers(row.id, notifierIds);
        // No timeline event: the platform records alert creation and deletion only (go-scalingo events_alert.go).
      });
      return json(row);
    },

    delete(user: UserRow, appKey: string, id: string): void {
      const app = deps.apps.visibleApp(user, appKey);
      const a = find(app, id);
      tx(deps.db, () => {
        store.delete(a.id);
        events.record({
          type: 'delete_alert',
          app,
          user,
          typeData: { container_type: a.container_type, metric: a.metric },
        });
      });
    },
  };
}

export type AlertsService = ReturnType<typeof createAlertsService>;
