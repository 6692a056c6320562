import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { prefixedUuid } from '../../shared/ids.ts';
import { metricText } from '../alerts/alerts.view.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { MAX_PER_TYPE } from '../containers/containers.service.ts';
import { type EventsService } from '../events/events.service.ts';
import { type EventRow } from '../events/events.store.ts';
import { MIN_CONTAINERS_FLOOR, RESOURCE_METRICS, ROUTER_METRICS } from './autoscaler-metrics.ts';
import { type CreateAutoscalerInput, type UpdateAutoscalerInput } from './autoscalers.schemas.ts';
import { type AutoscalerRow, type AutoscalersStore } from './autoscalers.store.ts';

/** The platform's autoscaler actor (row inserted by migration 010): the scale events it causes are its. */
export const AUTOSCALER_USER_ID = 'us-scalingo-platform-autoscaler';

export interface AutoscalersServiceDeps {
  db: Db;
  store: AutoscalersStore;
  apps: AppsService;
  events: EventsService;
  clock: Clock;
  /** Process types the app is known to have (formation and last release); empty when never deployed. */
  knownTypes: (app: AppRow) => string[];
  userById: (id: string) => UserRow | undefined;
  billingUrl: () => string;
}

export function createAutoscalersService(deps: AutoscalersServiceDeps) {
  const { store, clock } = deps;

  function toJson(a: AutoscalerRow) {
    return {
      id: a.id,
      app_id: a.app_id,
      container_type: a.container_type,
      metric: a.metric,
      target: a.target,
      target_text: metricText(a.metric, a.target),
      min_containers: a.min_containers,
      max_containers: a.max_containers,
      disabled: a.disabled === 1,
      created_at: isoDate(a.created_at),
      updated_at: isoDate(a.updated_at),
      last_scale: isoDate(a.last_scale),
    };
  }

  // go-scalingo EventNewAutoscalerTypeData: min/max are `json:",string"` — JSON strings.
  const eventData = (a: AutoscalerRow) => ({
    container_type: a.container_type,
    min_containers: String(a.min_containers),
    max_containers: String(a.max_containers),
    metric: a.metric,
    target: a.target,
    target_text: metricText(a.metric, a.target),
  });

  /** The rules of the platform on a complete autoscaler; 422 on the first field at fault. */
  function check(
    a: Pick<AutoscalerRow, 'container_type' | 'metric' | 'target' | 'min_containers' | 'max_containers'>,
  ): void {
    if (ROUTER_METRICS.has(a.metric) && a.container_type !== 'web')
      throw ApiError.invalid('metric', `${a.metric} is a router metric: only web containers can be scaled on it`);
    if (RESOURCE_METRICS.has(a.metric) && a.target > 1)
      throw ApiError.invalid('target', `must be a fraction between 0 and 1 for ${a.metric} (0.75 means 75 %)`);
    if (a.min_containers < MIN_CONTAINERS_FLOOR)
      throw ApiError.invalid('min_containers', `must be greater than or equal to ${MIN_CONTAINERS_FLOOR}`);
    if (a.max_containers < a.min_containers)
      throw ApiError.invalid('max_containers', 'must be greater than or equal to min_containers');
    if (a.max_containers > MAX_PER_TYPE)
      throw ApiError.invalid('max_containers', `must be less than or equal to ${MAX_PER_TYPE}`);
  }

  function writable(user: UserRow, appKey: string): AppRow {
    const app = deps.apps.writableApp(user, appKey, 'change autoscalers');
    const owner = deps.userById(app.owner_id);
    // Without a payment method only one web container is allowed: an autoscaler (2 at least) cannot run.
    if (owner && !owner.payment_method)
      throw ApiError.paymentRequired(
        'Sorry, autoscaling needs a payment method: without one only a single web container is allowed',
        deps.billingUrl(),
      );
    return app;
  }

  function find(app: AppRow, id: string): AutoscalerRow {
    const a = store.find(app.id, id);
    if (!a) throw ApiError.notFound('autoscaler');
    return a;
  }

  return {
    toJson,
    list(user: UserRow, appKey: string) {
      return store.ofApp(deps.apps.visibleApp(user, appKey).id).map(toJson);
    },
    show(user: UserRow, appKey: string, id: string) {
      return toJson(find(deps.apps.visibleApp(user, appKey), id));
    },

    create(user: UserRow, appKey: string, input: CreateAutoscalerInput) {
      const app = writable(user, appKey);
      const known = deps.knownTypes(app);
      if (known.length && !known.includes(input.container_type))
        throw ApiError.notFound('container_type', `${input.container_type} is not a process type of the app`);
      if (store.byType(app.id, input.container_type))
        throw ApiError.invalid('container_type', `${input.container_type} already has an autoscaler`);
      const now = clock.now();
      const row: AutoscalerRow = {
        id: prefixedUuid('au'),
        app_id: app.id,
        container_type: input.container_type,
        metric: input.metric,
        target: input.target,
        min_containers: input.min_containers,
        max_containers: input.max_containers,
        disabled: input.disabled ? 1 : 0,
        last_scale: null,
        created_at: now,
        updated_at: now,
      };
      check(row);
      tx(deps.db, () => {
        store.insert(row);
        deps.events.record({ type: 'new_autoscaler', app, user, typeData: eventData(row) });
      });
      return toJson(row);
    },

    update(user: UserRow, appKey: string, id: string, input: UpdateAutoscalerInput) {
      const app = writable(user, appKey);
      const current = find(app, id);
      const next: AutoscalerRow = {
        ...current,
        metric: input.metric ?? current.metric,
        target: input.target ?? current.target,
        min_containers: input.min_containers ?? current.min_containers,
        max_containers: input.max_containers ?? current.max_containers,
        disabled: input.disabled == null ? current.disabled : input.disabled ? 1 : 0,
        updated_at: clock.now(),
      };
      check(next);
      tx(deps.db, () => {
        store.update(next);
        deps.events.record({ type: 'edit_autoscaler', app, user, typeData: eventData(next) });
      });
      return toJson(next);
    },

    remove(user: UserRow, appKey: string, id: string): void {
      const app = deps.apps.writableApp(user, appKey, 'change autoscalers');
      const a = find(app, id);
      tx(deps.db, () => {
        store.delete(a.id);
        deps.events.record({
          type: 'delete_autoscaler',
          app,
          user,
          typeData: { container_type: a.container_type, metric: a.metric },
        });
      });
    },

    /**
     * A scale done by a user (not by the autoscaler) on a type with an autoscaler disables it, as the
     * CLI warns before scaling ("Manually scaling it will disable the autoscaler").
     */
    onEvent(e: EventRow): void {
      if (e.type !== 'scale' || !e.app_id || e.user_id === AUTOSCALER_USER_ID) return;
      const data = JSON.parse(e.type_data) as {
        containers?: Record<string, string>;
        previous_containers?: Record<string, string>;
      };
      for (const [type, amount] of Object.entries(data.containers ?? {})) {
        if (data.previous_containers?.[type] === amount) continue;
        const a = store.byType(e.app_id, type);
        if (a && a.disabled === 0) store.disable(a.id, clock.now());
      }
    },
  };
}

export type AutoscalersService = ReturnType<typeof createAutoscalersService>;
