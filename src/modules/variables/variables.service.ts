import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { objectId } from '../../shared/ids.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { type EventsService } from '../events/events.service.ts';
import { type VariableInput } from './variables.schemas.ts';
import { type VariableRow, type VariablesStore } from './variables.store.ts';

export interface VariablesServiceDeps {
  db: Db;
  store: VariablesStore;
  apps: AppsService;
  events: EventsService;
}

/** Who acts on which app: resolved once, before the body is read (404/403 come before 422). */
export interface VariablesScope {
  user: UserRow;
  app: AppRow;
}

const view = (v: VariableRow) => ({ id: v.id, name: v.name, value: v.value });
export type VariableView = ReturnType<typeof view>;

/**
 * Environment variables of an app (list, create, bulk update, update, delete). As on the
 * platform, a change takes effect at the next restart or deployment, not at once.
 */
export function createVariablesService(deps: VariablesServiceDeps) {
  const { store, events } = deps;

  return {
    /** A Limited Collaborator may neither read nor change variables (403). */
    scope(user: UserRow, appParam: string): VariablesScope {
      return { user, app: deps.apps.writableApp(user, appParam, 'read or change environment variables') };
    },

    list({ app }: VariablesScope): VariableView[] {
      return store.all(app.id).map(view);
    },

    /** Creates the variable, or sets the value of the one with that name. */
    create({ user, app }: VariablesScope, variable: VariableInput): VariableView {
      const existing = store.byName(app.id, variable.name);
      const row = existing ? { ...existing, value: variable.value } : { id: objectId(), app_id: app.id, ...variable };
      tx(deps.db, () => {
        if (existing) store.update(existing.id, variable.value);
        else store.insert(row);
        events.record(
          existing
            ? {
                type: 'edit_variable',
                app,
                user,
                typeData: { name: row.name, value: row.value, old_value: existing.value },
              }
            : { type: 'new_variable', app, user, typeData: { name: row.name, value: row.value } },
        );
      });
      return view(row);
    },

    /** Bulk create-or-update: one edit_variables event; answers the variables named. */
    bulkUpsert({ user, app }: VariablesScope, variables: VariableInput[]): VariableView[] {
      if (!variables.length) return [];
      const newVars: VariableInput[] = [];
      const updatedVars: (VariableInput & { old_value: string })[] = [];
      tx(deps.db, () => {
        for (const v of variables) {
          const existing = store.byName(app.id, v.name);
          if (existing) {
            store.update(existing.id, v.value);
            updatedVars.push({ ...v, old_value: existing.value });
          } else {
            store.insert({ id: objectId(), app_id: app.id, ...v });
            newVars.push(v);
          }
        }
        events.record({
          type: 'edit_variables',
          app,
          user,
          typeData: { new_vars: newVars, updated_vars: updatedVars, deleted_vars: [] },
        });
      });
      const names = new Set(variables.map((v) => v.name));
      return store
        .all(app.id)
        .filter((v) => names.has(v.name))
        .map(view);
    },

    /** The variable of this app with this id, or 404. */
    byId({ app }: VariablesScope, id: string): VariableRow {
      const existing = store.byId(app.id, id);
      if (!existing) throw ApiError.notFound('variable');
      return existing;
    },

    update({ user, app }: VariablesScope, existing: VariableRow, value: string): VariableView {
      tx(deps.db, () => {
        store.update(existing.id, value);
        events.record({
          type: 'edit_variable',
          app,
          user,
          typeData: { name: existing.name, value, old_value: existing.value },
        });
      });
      return view({ ...existing, value });
    },

    delete({ user, app }: VariablesScope, existing: VariableRow): void {
      tx(deps.db, () => {
        store.delete(existing.id);
        events.record({ type: 'delete_variable', app, user, typeData: { name: existing.name, value: existing.value } });
      });
    },

    /** All or nothing: one unknown id is a 404 and nothing is deleted. */
    bulkDelete({ user, app }: VariablesScope, ids: string[]): void {
      const rows: VariableRow[] = [];
      for (const id of ids) {
        const row = store.byId(app.id, id);
        if (!row) throw ApiError.notFound('variable');
        rows.push(row);
      }
      tx(deps.db, () => {
        for (const row of rows) store.delete(row.id);
        events.record({
          type: 'edit_variables',
          app,
          user,
          typeData: {
            new_vars: [],
            updated_vars: [],
            deleted_vars: rows.map((r) => ({ name: r.name, value: r.value })),
          },
        });
      });
    },
  };
}

export type VariablesService = ReturnType<typeof createVariablesService>;
