import { ApiError } from '../../http/errors.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { objectId } from '../../shared/ids.ts';
import { type OperationRow, type OperationsStore } from './operations.store.ts';

/**
 * Asynchronous work on an app: created `pending`, `running` while the work goes on, then
 * `done` or `error` with the error text. The work runs in the background; the caller answers
 * 202 with a Location to GET /v1/apps/:app/operations/:id.
 */
export function createOperationsService(deps: {
  store: OperationsStore;
  clock: Clock;
  log: { error(o: object, m: string): void };
}) {
  const { store, clock } = deps;
  const inFlight = new Set<Promise<void>>();
  return {
    start(
      appId: string,
      type: string,
      work: (op: OperationRow) => Promise<void>,
      data: Record<string, unknown> = {},
    ): OperationRow {
      const op: OperationRow = {
        id: objectId(clock.now()),
        app_id: appId,
        type,
        status: 'pending',
        error: null,
        data: JSON.stringify(data),
        created_at: clock.now(),
        finished_at: null,
      };
      store.insert(op);
      const run = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => {
          store.setStatus(op.id, 'running');
          return work(op);
        })
        .then(
          () => store.finish(op.id, 'done', null, clock.now()),
          (err: Error) => {
            deps.log.error({ err, operation: op.id }, 'operation failed');
            store.finish(op.id, 'error', err.message, clock.now());
          },
        )
        .finally(() => inFlight.delete(run));
      inFlight.add(run);
      return op;
    },
    get(appId: string, id: string): OperationRow {
      const op = store.get(appId, id);
      if (!op) throw ApiError.notFound('operation');
      return op;
    },
    setData: store.setData,
    /** Resolves once no operation runs (the emulator's stop waits for them). */
    async idle(): Promise<void> {
      while (inFlight.size) await Promise.allSettled([...inFlight]);
    },
    /** Work interrupted by an emulator stop cannot resume: it ends in error, said plainly. */
    failInterrupted(): void {
      for (const op of store.unfinished())
        store.finish(op.id, 'error', 'interrupted: the emulator stopped while the operation ran', clock.now());
    },
  };
}

export function operationJson(op: OperationRow) {
  const data = JSON.parse(op.data) as Record<string, unknown>;
  return {
    id: op.id,
    app_id: op.app_id,
    created_at: isoDate(op.created_at),
    // The Go client decodes finished_at into a non-pointer time: never null (zero time while pending).
    finished_at: isoDate(op.finished_at) ?? '0001-01-01T00:00:00.000Z',
    status: op.status,
    type: op.type,
    ...(op.status === 'error' ? { error: op.error ?? 'unknown error' } : {}),
    ...data,
  };
}

export type OperationsService = ReturnType<typeof createOperationsService>;
