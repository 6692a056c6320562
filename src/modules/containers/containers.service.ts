import { type ContainerSize } from '../../config/schema.ts';
import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type ContainerRuntime, ENGINE_UNREACHABLE_MESSAGE, LABELS } from '../../runtime/runtime.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { objectId } from '../../shared/ids.ts';
import { type AppRow, type AppsStore } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { type EventsService } from '../events/events.service.ts';
import { type OperationsService } from '../operations/operations.service.ts';
import { type OperationRow } from '../operations/operations.store.ts';
import { type ContainerRow, type ContainersStore, type FormationRow } from './containers.store.ts';
import { type Orchestrator } from './orchestrator.ts';

export const MAX_PER_TYPE = 10;
const BUSY = new Set(['scaling', 'restarting', 'booting']);

export interface ContainersServiceDeps {
  db: Db;
  store: ContainersStore;
  apps: AppsStore;
  orchestrator: Orchestrator;
  operations: OperationsService;
  runtime: ContainerRuntime;
  events: EventsService;
  clock: Clock;
  sizes: ContainerSize[];
  instanceId: string;
  billingUrl: () => string;
  userById: (id: string) => UserRow | undefined;
}

/** While an operation runs the app is not `running`: the platform refuses other operations. */
export function assertIdle(app: AppRow): void {
  if (BUSY.has(app.status))
    throw new ApiError(409, {
      error: `The application is ${app.status}: no other operation can be done until it is running again. Follow the current operation and retry.`,
    });
}

/** Nothing starts for an app being deleted: 404 once it is gone, 409 while its deletion runs. */
export function assertNotBeingDeleted(
  app: AppRow,
  orchestrator: Pick<Orchestrator, 'gone'>,
  apps: Pick<AppsStore, 'find'>,
): void {
  if (!apps.find(app.id)) throw ApiError.notFound('app');
  if (orchestrator.gone(app.id)) throw new ApiError(409, { error: `The application ${app.name} is being deleted.` });
}

/**
 * Work for the engine is accepted only while it answers: during an outage the caller gets 503 and
 * nothing is recorded (no formation change, operation or deployment). Cheap: the runtime's state,
 * refreshed by a ping when not confirmed within the last second.
 */
export async function assertEngineAvailable(runtime: Pick<ContainerRuntime, 'available'>): Promise<void> {
  if (!(await runtime.available())) throw ApiError.unavailable(ENGINE_UNREACHABLE_MESSAGE);
}

/** The app as it is after an await (it may have been deleted or changed meanwhile). */
function reread(apps: Pick<AppsStore, 'find'>, app: AppRow): AppRow {
  const fresh = apps.find(app.id);
  if (!fresh) throw ApiError.notFound('app');
  return fresh;
}

export function createContainersService(deps: ContainersServiceDeps) {
  const { store, orchestrator } = deps;

  function sizeJson(name: string) {
    return orchestrator.sizeOf(name);
  }

  function containerJson(c: ContainerRow, engineState?: string) {
    const state = engineState && c.state === 'running' && engineState !== 'running' ? 'crashed' : c.state;
    return {
      id: c.id,
      app_id: c.app_id,
      type: c.type,
      type_index: c.type_index,
      label: `${c.type}-${c.type_index}`,
      created_at: isoDate(c.created_at),
      deleted_at: isoDate(c.deleted_at),
      state,
      size: c.size,
      command: c.command,
      container_size: sizeJson(c.size),
    };
  }

  function formationJson(f: FormationRow) {
    return { id: f.id, app_id: f.app_id, name: f.type, amount: f.amount, size: f.size, command: f.command };
  }

  function finishOperation(app: AppRow): (err?: Error) => void {
    return () => orchestrator.settleStatus(app.id);
  }

  return {
    containerJson,
    /**
     * #10 — every container, one-off included, with the state Docker reports now: one engine list of the app's
     * containers (no inspect per container), so one that died or was removed behind the emulator's back shows at once.
     */
    async ps(app: AppRow) {
      const rows = store.liveContainers(app.id);
      const engine = await deps.runtime.states({ [LABELS.instance]: deps.instanceId, [LABELS.appId]: app.id });
      const stateOf = new Map(engine.map((e) => [e.engineId, e.state]));
      return rows.map((r) => containerJson(r, r.engine_id ? (stateOf.get(r.engine_id) ?? 'gone') : undefined));
    },

    /** #11 */
    formation(app: AppRow) {
      return store.formation(app.id).map(formationJson);
    },

    /**
     * #12 — final amounts (and optional size) per type. Without a payment method only one S or M
     * web container. Answers the complete formation and, once deployed, an operation to follow.
     */
    async scale(
      user: UserRow,
      app: AppRow,
      items: { name: string; amount: number; size?: string | null }[],
    ): Promise<{ formation: ReturnType<typeof formationJson>[]; operation: OperationRow | null }> {
      // Never deployed: only the formation is recorded (no engine needed).
      if (orchestrator.release(app)) {
        await assertEngineAvailable(deps.runtime);
        app = reread(deps.apps, app);
      }
      assertIdle(app);
      assertNotBeingDeleted(app, orchestrator, deps.apps);
      const rel = orchestrator.release(app);
      const current = store.formation(app.id);
      const sizeNames = deps.sizes.map((s) => s.name);
      const seen = new Set<string>();
      for (const [i, it] of items.entries()) {
        if (seen.has(it.name)) throw ApiError.invalid(`containers.${i}.name`, `${it.name} is given twice`);
        seen.add(it.name);
        if (it.amount > MAX_PER_TYPE)
          throw ApiError.invalid('amount', `${it.name}: the maximum is ${MAX_PER_TYPE} containers of a given type`);
        if (it.size && !sizeNames.includes(it.size))
          throw ApiError.invalid('size', `${it.size} is not a container size (${sizeNames.join(', ')})`);
        if (rel && !(it.name in rel.processTypes) && !current.some((f) => f.type === it.name))
          throw ApiError.notFound('container_type', `${it.name} is not a process type of the app`);
      }
      const next = new Map(current.map((f) => [f.type, { ...f }]));
      for (const it of items) {
        const f = next.get(it.name);
        next.set(it.name, {
          app_id: app.id,
          type: it.name,
          id: f?.id ?? objectId(),
          amount: it.amount,
          size: it.size || f?.size || 'M',
          command: f?.command ?? rel?.processTypes[it.name] ?? '',
        });
      }
      const owner = deps.userById(app.owner_id);
      if (owner && !owner.payment_method) {
        const bad = [...next.values()].find(
          (f) => f.amount > 0 && (f.type !== 'web' || f.amount > 1 || !['S', 'M'].includes(f.size)),
        );
        if (bad)
          throw ApiError.paymentRequired(
            'Sorry, without a payment method only one S or M web container is allowed: define a payment method to scale further',
            deps.billingUrl(),
          );
      }
      const describe = (rows: Iterable<FormationRow>) =>
        Object.fromEntries([...rows].map((f) => [f.type, `${f.amount}:${f.size}`]));
      tx(deps.db, () => {
        for (const f of next.values()) store.upsertFormation(f);
        deps.events.record({
          type: 'scale',
          app,
          user,
          typeData: { previous_containers: describe(current), containers: describe(next.values()) },
        });
      });
      const formation = store.formation(app.id).map(formationJson);
      if (!rel) return { formation, operation: null }; // never deployed: applied at the first deployment
      deps.apps.setStatus(app.id, 'scaling');
      const done = finishOperation(app);
      const operation = deps.operations.start(app.id, 'scale', async () => {
        try {
          const fresh = deps.apps.find(app.id);
          if (fresh) await orchestrator.converge(fresh, rel);
        } finally {
          done();
        }
      });
      return { formation, operation };
    },

    /** #13 — scope: types or `<type>-<index>`; empty = every container. Containers are really replaced. */
    async restart(user: UserRow, app: AppRow, scope: string[]): Promise<OperationRow> {
      await assertEngineAvailable(deps.runtime);
      app = reread(deps.apps, app);
      assertIdle(app);
      assertNotBeingDeleted(app, orchestrator, deps.apps);
      const live = store.liveContainers(app.id).filter((c) => c.type !== 'one-off');
      for (const s of scope) {
        const m = /^(.+)-(\d+)$/.exec(s);
        const isType = live.some((c) => c.type === s) || store.formation(app.id).some((f) => f.type === s);
        if (isType) continue;
        if (m && live.some((c) => c.type === m[1] && c.type_index === Number(m[2]))) continue;
        if (m && live.some((c) => c.type === m[1]))
          throw ApiError.notFound('container', `${s} is not a container of the app`);
        throw ApiError.notFound('container_type', `${s} is not a process type or a container of the app`);
      }
      const rel = orchestrator.release(app);
      const matches = (c: ContainerRow) =>
        !scope.length || scope.includes(c.type) || scope.includes(`${c.type}-${c.type_index}`);
      deps.events.record({
        type: 'restart',
        app,
        user,
        typeData: { scope: scope.length ? scope : null, addon_name: '', reason: 'user_restart' },
      });
      deps.apps.resetCrashes(app.id);
      deps.apps.setStatus(app.id, 'restarting');
      const done = finishOperation(app);
      return deps.operations.start(app.id, 'restart', async () => {
        try {
          const fresh = deps.apps.find(app.id);
          if (rel && fresh) await orchestrator.converge(fresh, rel, matches);
        } finally {
          done();
        }
      });
    },
  };
}

export type ContainersService = ReturnType<typeof createContainersService>;
