import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type UserRow } from '../auth/principal.ts';
import { type EventsService } from '../events/events.service.ts';
import { type AppHooks } from './apps.service.ts';
import { type AppRow, type AppsStore } from './apps.store.ts';

export interface AppDeletionDeps {
  db: Db;
  store: AppsStore;
  events: EventsService;
  /** The apps service's hooks (the list grows as areas plug in). */
  hooks: AppHooks[];
  accessLost: (app: AppRow) => void;
}

/**
 * An app's deletion, its checks done: the areas' `beforeDelete` hooks (waiting only on those that return a promise:
 * most areas have nothing to remove first, and then the deletion is synchronous and its 204 leaves without a promise),
 * the row and its `delete_app` event in one transaction, then the `afterDelete` hooks told whether the row is gone,
 * done or failed (a hook, a concurrent DELETE).
 */
export function appDeletion(deps: AppDeletionDeps): (app: AppRow, user: UserRow) => void | Promise<void> {
  const { store, hooks } = deps;

  function afterHooks(app: AppRow, user: UserRow, from: number): void | Promise<void> {
    for (let i = from; i < hooks.length; i++) {
      let pending: Promise<void> | void;
      try {
        pending = hooks[i].beforeDelete?.(app);
      } catch (err) {
        deleted(app, false);
        throw err;
      }
      if (pending)
        return pending.then(
          () => afterHooks(app, user, i + 1),
          (err: unknown) => {
            deleted(app, false);
            throw err;
          },
        );
    }
    let removed = false;
    try {
      tx(deps.db, () => {
        if (!store.delete(app.id)) throw ApiError.notFound('app'); // a concurrent DELETE won
        deps.events.record({ type: 'delete_app', app, user });
      });
      removed = true;
    } finally {
      deleted(app, removed);
    }
  }

  function deleted(app: AppRow, removed: boolean): void {
    const gone = removed || !store.find(app.id);
    for (const h of hooks) h.afterDelete?.(app, gone);
    if (gone) deps.accessLost(app);
  }

  return (app, user) => afterHooks(app, user, 0);
}
