import { type Clock, isoDate } from '../../shared/clock.ts';
import { objectId } from '../../shared/ids.ts';
import { paginate } from '../../shared/pagination.ts';
import { type UserRow } from '../auth/principal.ts';
import { type EventType, PLATFORM_USER_ID } from './event-types.ts';
import { type EventRow, type EventsStore } from './events.store.ts';

export interface RecordInput {
  type: EventType;
  app?: { id: string; name: string } | null;
  user?: { id: string } | null;
  typeData?: Record<string, unknown>;
}

export interface EventsServiceDeps {
  store: EventsStore;
  clock: Clock;
  userById: (id: string) => UserRow | undefined;
}

/** The recorder every action writes to, and the readers of the timeline. */
export function createEventsService(deps: EventsServiceDeps) {
  const { store, clock } = deps;
  const listeners = new Set<(e: EventRow) => void>();

  function toJson(e: EventRow) {
    // Events the platform itself causes (crashes, alerts) name its own user, so clients can print it.
    const user = deps.userById(e.user_id ?? PLATFORM_USER_ID);
    const typeData = JSON.parse(e.type_data) as Record<string, unknown>;
    return {
      id: e.id,
      created_at: isoDate(e.created_at),
      type: e.type,
      app_id: e.app_id,
      app_name: e.app_name,
      user: user ? { id: user.id, username: user.username, email: user.email } : null,
      type_data: typeData,
      // Project events name their project at the top level (go-scalingo Event.ProjectID/ProjectName).
      ...(typeof typeData.project_id === 'string'
        ? { project_id: typeData.project_id, project_name: typeData.project_name }
        : {}),
    };
  }

  return {
    record(input: RecordInput): EventRow {
      const now = clock.now();
      const row: EventRow = {
        seq: 0, // not read back: no listener needs it
        id: objectId(now),
        type: input.type,
        app_id: input.app?.id ?? null,
        app_name: input.app?.name ?? null,
        user_id: input.user?.id ?? null,
        created_at: now,
        type_data: input.typeData ? JSON.stringify(input.typeData) : '{}',
      };
      store.insert(row);
      for (const l of listeners) l(row);
      return row;
    },
    /** Later areas (alerts, notifiers) listen to what is recorded. */
    onRecord(listener: (e: EventRow) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    listForApp(appId: string, page: number, perPage: number) {
      const p = paginate(store.countForApp(appId), page, perPage);
      return { events: store.pageForApp(appId, p.limit, p.offset).map(toJson), meta: { pagination: p.meta } };
    },
    listForUser(userId: string, page: number, perPage: number) {
      const p = paginate(store.countForUser(userId), page, perPage);
      return { events: store.pageForUser(userId, p.limit, p.offset).map(toJson), meta: { pagination: p.meta } };
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
