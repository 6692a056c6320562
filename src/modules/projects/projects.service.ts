import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { prefixedUuid } from '../../shared/ids.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { type EventsService } from '../events/events.service.ts';
import { type ProjectRow, type ProjectsStore } from './projects.store.ts';

export const DEFAULT_PROJECT_NAME = 'default';
/** Projects one user may own (a bound, not a platform figure). */
const MAX_PROJECTS = 100;

export interface ProjectsServiceDeps {
  db: Db;
  store: ProjectsStore;
  events: EventsService;
  clock: Clock;
  userById: (id: string) => UserRow | undefined;
  /** The app a user may see (404 otherwise), from the apps service. */
  visibleApp: (user: UserRow, key: string) => AppRow;
}

/**
 * Projects group a user's apps (go-scalingo projects.go). Every user has exactly one default
 * project, made when first needed; an app without a project is in its owner's default one.
 */
export function createProjectsService(deps: ProjectsServiceDeps) {
  const { store, clock, events } = deps;

  function ensureDefault(ownerId: string): ProjectRow {
    const existing = store.defaultOf(ownerId);
    if (existing) return existing;
    const now = clock.now();
    const row: ProjectRow = {
      id: prefixedUuid('prj'),
      owner_id: ownerId,
      name: store.byName(ownerId, DEFAULT_PROJECT_NAME) ? `${DEFAULT_PROJECT_NAME}-${now}` : DEFAULT_PROJECT_NAME,
      is_default: 1,
      created_at: now,
      updated_at: now,
    };
    store.insert(row);
    return row;
  }

  function owned(user: UserRow, id: string): ProjectRow {
    const row = store.byId(id);
    if (!row || row.owner_id !== user.id) throw ApiError.notFound('project');
    return row;
  }

  function json(row: ProjectRow) {
    const owner = deps.userById(row.owner_id);
    return {
      id: row.id,
      name: row.name,
      default: row.is_default === 1,
      flags: {} as Record<string, boolean>,
      created_at: isoDate(row.created_at),
      updated_at: isoDate(row.updated_at),
      owner: owner ? { id: owner.id, username: owner.username, email: owner.email } : null,
    };
  }

  const record = (
    type: 'new_project' | 'edit_project' | 'delete_project',
    user: UserRow,
    row: ProjectRow,
    typeData: Record<string, unknown>,
  ) => events.record({ type, user, typeData: { ...typeData, project_id: row.id, project_name: row.name } });

  // A transferred app leaves its old owner's project: it lands in the new owner's default one.
  events.onRecord((e) => {
    if (e.type === 'transfer_app' && e.app_id) store.setAppProject(e.app_id, null);
  });

  return {
    json,

    /** The app's project as the Application resource embeds it (`project: {id, name}`). */
    ofApp(app: AppRow): { id: string; name: string } {
      const row = (app.project_id && store.byId(app.project_id)) || ensureDefault(app.owner_id);
      return { id: row.id, name: row.name };
    },

    list(user: UserRow) {
      ensureDefault(user.id);
      return store.byOwner(user.id).map(json);
    },

    get: (user: UserRow, id: string) => json(owned(user, id)),

    create(user: UserRow, input: { name: string; default?: boolean | null }) {
      ensureDefault(user.id);
      if (store.byOwner(user.id).length >= MAX_PROJECTS)
        throw ApiError.invalid('project', `at most ${MAX_PROJECTS} projects per user`);
      if (store.byName(user.id, input.name)) throw ApiError.invalid('name', 'has already been taken');
      const now = clock.now();
      const row: ProjectRow = {
        id: prefixedUuid('prj'),
        owner_id: user.id,
        name: input.name,
        is_default: input.default ? 1 : 0,
        created_at: now,
        updated_at: now,
      };
      tx(deps.db, () => {
        if (row.is_default) store.clearDefault(user.id);
        store.insert(row);
        record('new_project', user, row, { default: row.is_default === 1 });
      });
      return json(row);
    },

    /** `default` can only become true (the previous default stops being one); never back to false. */
    update(user: UserRow, id: string, input: { name?: string; default?: boolean }) {
      const row = owned(user, id);
      if (input.name === undefined && input.default === undefined)
        throw ApiError.invalid('project', 'give a name or default: true');
      if (input.default === false && row.is_default)
        throw ApiError.invalid('default', 'cannot go from true to false: make another project the default one');
      if (input.name !== undefined && input.name !== row.name && store.byName(user.id, input.name))
        throw ApiError.invalid('name', 'has already been taken');
      const next: ProjectRow = {
        ...row,
        name: input.name ?? row.name,
        is_default: input.default ? 1 : row.is_default,
        updated_at: clock.now(),
      };
      const changes = [
        ...(next.name !== row.name ? [{ name: 'name', value: next.name, old_value: row.name }] : []),
        ...(next.is_default !== row.is_default ? [{ name: 'default', value: 'true', old_value: 'false' }] : []),
      ];
      tx(deps.db, () => {
        // Apps without a project follow the default: pin them to the old default before it changes.
        if (next.is_default && !row.is_default) {
          const old = ensureDefault(user.id);
          store.pinUnassigned(user.id, old.id);
          store.clearDefault(user.id);
        }
        store.update(next);
        if (changes.length) record('edit_project', user, next, { updated_values: changes });
      });
      return json(next);
    },

    /** The default project and a project with apps cannot be deleted. */
    remove(user: UserRow, id: string): void {
      const row = owned(user, id);
      if (row.is_default)
        throw ApiError.invalid('project', 'is the default project: make another project the default one first');
      if (store.countApps(row.id))
        throw ApiError.invalid('project', 'still has applications: move or delete them first');
      tx(deps.db, () => {
        store.remove(row.id);
        record('delete_project', user, row, {});
      });
    },

    /** The project must exist and belong to the user (the app's future owner). */
    check(user: UserRow, id: string | null | undefined): void {
      if (id) owned(user, id);
    },

    /** The new app's project at creation (checked before by `check`); unchanged without one. */
    assign(app: AppRow, id: string | null | undefined): AppRow {
      if (!id) return app;
      store.setAppProject(app.id, id);
      return { ...app, project_id: id };
    },

    /** PUT /v1/apps/:app {"project_id"}: only the owner moves an app, to one of the owner's projects. */
    move(user: UserRow, appKey: string, id: string): AppRow {
      const app = deps.visibleApp(user, appKey);
      if (app.owner_id !== user.id)
        throw ApiError.forbidden('only the owner of the application can move it to another project');
      const target = owned(user, id);
      const from = (app.project_id && store.byId(app.project_id)) || ensureDefault(app.owner_id);
      if (from.id !== target.id) {
        tx(deps.db, () => {
          store.setAppProject(app.id, target.id);
          events.record({
            type: 'update_app_project',
            app,
            user,
            typeData: {
              old_project_id: from.id,
              old_project_name: from.name,
              new_project_id: target.id,
              new_project_name: target.name,
            },
          });
        });
      }
      return { ...app, project_id: target.id };
    },
  };
}

export type ProjectsService = ReturnType<typeof createProjectsService>;
