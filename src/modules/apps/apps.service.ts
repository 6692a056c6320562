import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock } from '../../shared/clock.ts';
import { defined } from '../../shared/defined.ts';
import { objectId } from '../../shared/ids.ts';
import { paginate } from '../../shared/pagination.ts';
import { type UserRow } from '../auth/principal.ts';
import { type CollaboratorsStore } from '../collaborators/collaborators.store.ts';
import { type EventsService } from '../events/events.service.ts';
import { appDeletion } from './app-deletion.ts';
import { type AppRow, type AppSettings, type AppsStore } from './apps.store.ts';

/** What other areas plug into the apps lifecycle (the runtime deploys, removes containers…). */
export interface AppHooks {
  afterCreate?(app: AppRow): void;
  beforeDelete?(app: AppRow): Promise<void> | void;
  /** After the deletion, whether it succeeded or not: `gone` says whether the app's row is gone. */
  afterDelete?(app: AppRow, gone: boolean): void;
  afterRename?(app: AppRow, oldName: string): void;
  /**
   * Someone may have lost access to the app (a collaborator removed, the app transferred or
   * deleted): holders of signed URLs and open streams re-check with hasAccess and close.
   */
  afterAccessLost?(app: AppRow): void;
}

export interface AppsServiceDeps {
  db: Db;
  store: AppsStore;
  collaborators: CollaboratorsStore;
  events: EventsService;
  clock: Clock;
  stacks: Record<string, string>;
  defaultStack: string;
  billingUrl: () => string;
  userByEmail: (email: string) => UserRow | undefined;
  userById: (id: string) => UserRow | undefined;
  hooks?: AppHooks[];
}

export interface CreateInput {
  name: string;
  git_source?: string | null;
  stack_id?: string | null;
}

/** The app, when `user` owns it; a 403 otherwise (a collaborator sees it but may not do this). */
function mustOwn(user: UserRow, app: AppRow): AppRow {
  if (app.owner_id !== user.id) throw ApiError.forbidden('only the owner of the app can do this');
  return app;
}

export function createAppsService(deps: AppsServiceDeps) {
  const { store, events, clock } = deps;
  const hooks = [...(deps.hooks ?? [])];

  function checkStack(stackId: string): void {
    if (!(stackId in deps.stacks))
      throw ApiError.invalid('stack_id', `is not a known stack (known: ${Object.keys(deps.stacks).join(', ')})`);
  }

  function checkNameFree(name: string): void {
    if (store.byName(name)) throw ApiError.invalid('name', 'has already been taken');
  }

  // Without a payment method, only 1 application can be had (the platform's free trial).
  function checkCanOwnAnother(user: UserRow): void {
    if (!user.payment_method && store.countOwnedBy(user.id) >= 1) {
      throw ApiError.paymentRequired(
        'Sorry, you need to verify your account (billing profile and payment card) to create a new app',
        deps.billingUrl(),
      );
    }
  }

  function checkCurrentName(app: AppRow, currentName: string | undefined, required: boolean): void {
    if (currentName === undefined || currentName === '') {
      if (required)
        throw ApiError.invalid('current_name', 'missing field: it must be the name of the app, as a confirmation');
      return;
    }
    if (currentName !== app.name)
      throw ApiError.invalid('current_name', `does not match the name of the app ("${currentName}" given)`);
  }

  function newRow(owner: UserRow, fields: Partial<AppRow> & { name: string; stack_id: string }): AppRow {
    const now = clock.now();
    return {
      id: objectId(now),
      owner_id: owner.id,
      parent_id: null,
      created_at: now,
      updated_at: now,
      status: 'new',
      git_source: null,
      force_https: 0,
      sticky_session: 0,
      router_logs: 0,
      flags: '{}',
      limits: '{}',
      last_deployed_at: null,
      last_deployed_by: null,
      last_deployment_id: null,
      consecutive_crashes: 0,
      source_dir: null,
      ...fields,
    };
  }

  const deleteApp = appDeletion({ db: deps.db, store, events, hooks, accessLost: (app) => service.accessLost(app) });

  const service = {
    store,
    /** Other areas plug into the lifecycle once they exist (the orchestrator is built after apps). */
    addHooks(h: AppHooks): void {
      hooks.push(h);
    },
    /** The afterDelete hooks, for apps whose rows another path removed (control plane reset and restore). */
    removedElsewhere(app: AppRow): void {
      const gone = !store.find(app.id);
      for (const h of hooks) h.afterDelete?.(app, gone);
    },
    /** The app as the user may see it (owner or accepted collaborator); otherwise 404 — never a hint it exists. */
    visibleApp(user: UserRow, idOrName: string): AppRow {
      const app = store.find(idOrName);
      if (!app || (app.owner_id !== user.id && !deps.collaborators.isAcceptedCollaborator(app.id, user.id)))
        throw ApiError.notFound('app');
      return app;
    },

    /**
     * Actions a Limited Collaborator may not do (environment, configuration, domains, addons, scaling,
     * deployments of new code, one-off containers): 403 for them, as for the platform (docs/fidelity.md).
     */
    writableApp(user: UserRow, idOrName: string, what = 'this'): AppRow {
      const app = service.visibleApp(user, idOrName);
      if (app.owner_id !== user.id && deps.collaborators.isLimitedCollaborator(app.id, user.id)) {
        throw ApiError.forbidden(
          `a limited collaborator cannot ${what}: ask the owner or a full collaborator of the app`,
        );
      }
      return app;
    },

    /** Whether a user may still see an app (signed URLs and open streams are checked with it at use). */
    hasAccess(userId: string, appId: string): boolean {
      const app = store.find(appId);
      return !!app && (app.owner_id === userId || deps.collaborators.isAcceptedCollaborator(app.id, userId));
    },

    /** Tells the areas holding URLs and streams that access to the app was narrowed. */
    accessLost(app: AppRow): void {
      for (const h of hooks) h.afterAccessLost?.(app);
    },

    /** Owner-only actions (delete, transfer, collaborators management). */
    ownedApp(user: UserRow, idOrName: string): AppRow {
      return mustOwn(user, service.visibleApp(user, idOrName));
    },

    find: (idOrName: string) => store.find(idOrName),
    all: () => store.all(),

    list(user: UserRow): AppRow[] {
      return store.visibleTo(user.id);
    },

    /** `flags`: the app's own flags (a dedicated database's app has `dedicated-database`). */
    create(
      user: UserRow,
      input: CreateInput,
      opts: { dryRun?: boolean; flags?: Record<string, boolean> } = {},
    ): AppRow {
      const stackId = input.stack_id ?? deps.defaultStack;
      checkStack(stackId);
      checkNameFree(input.name);
      checkCanOwnAnother(user);
      const row = newRow(user, {
        name: input.name,
        stack_id: stackId,
        git_source: input.git_source ?? null,
        flags: JSON.stringify(opts.flags ?? {}),
      });
      if (opts.dryRun) return row;
      tx(deps.db, () => {
        store.insert(row);
        events.record({ type: 'new_app', app: row, user, typeData: { git_source: row.git_source } });
      });
      for (const h of hooks) h.afterCreate?.(row);
      return row;
    },

    createChild(user: UserRow, parentIdOrName: string, name: string): AppRow {
      const parent = service.visibleApp(user, parentIdOrName);
      checkNameFree(name);
      const owner = deps.userById(parent.owner_id) ?? user;
      checkCanOwnAnother(owner);
      // A child (review) app starts from its parent's settings.
      const row = newRow(owner, {
        name,
        parent_id: parent.id,
        stack_id: parent.stack_id,
        git_source: parent.git_source,
        force_https: parent.force_https,
        sticky_session: parent.sticky_session,
        router_logs: parent.router_logs,
      });
      tx(deps.db, () => {
        store.insert(row);
        events.record({ type: 'new_app', app: row, user, typeData: { git_source: row.git_source } });
        events.record({
          type: 'create_review_app',
          app: parent,
          user,
          typeData: { app_name: row.name, app_id: row.id },
        });
      });
      for (const h of hooks) h.afterCreate?.(row);
      return row;
    },

    listChildren(user: UserRow, parentIdOrName: string, page: number, perPage: number) {
      const parent = service.visibleApp(user, parentIdOrName);
      const p = paginate(store.countChildren(parent.id), page, perPage);
      return { apps: store.children(parent.id, p.limit, p.offset), meta: { pagination: p.meta } };
    },

    /**
     * `app`: the row as the caller may see it (the route's `:app` loader read it): only the owner deletes.
     * The row is read once: the DELETE's own count says whether a concurrent deletion won meanwhile.
     */
    /** Synchronous unless an area has something to remove first (a hook returning a promise): no promise to wait on. */
    delete(user: UserRow, app: AppRow, currentName: string | undefined): void | Promise<void> {
      mustOwn(user, app);
      checkCurrentName(app, currentName, true);
      return deleteApp(app, user);
    },

    rename(user: UserRow, idOrName: string, currentName: string, newName: string): AppRow {
      const app = service.visibleApp(user, idOrName);
      checkCurrentName(app, currentName, true);
      if (newName !== app.name) checkNameFree(newName);
      tx(deps.db, () => {
        store.rename(app.id, newName, clock.now());
        events.record({
          type: 'rename_app',
          app: { id: app.id, name: newName },
          user,
          typeData: { old_name: app.name, new_name: newName },
        });
      });
      const renamed = defined(store.find(app.id), `app ${app.id}`);
      for (const h of hooks) h.afterRename?.(renamed, app.name);
      return renamed;
    },

    /** The new owner must already be an accepted collaborator; the old owner stays as a collaborator. */
    transfer(user: UserRow, idOrName: string, currentName: string | undefined, ownerEmail: string): AppRow {
      const app = service.ownedApp(user, idOrName);
      // The official Go client does not send current_name on transfer: checked only when given.
      checkCurrentName(app, currentName, false);
      const newOwner = deps.userByEmail(ownerEmail);
      if (!newOwner || !deps.collaborators.isAcceptedCollaborator(app.id, newOwner.id)) {
        throw ApiError.invalid('owner', 'should be part of the collaborators of the app');
      }
      checkCanOwnAnother(newOwner);
      const oldOwner = defined(deps.userById(app.owner_id), `owner of app ${app.id}`);
      tx(deps.db, () => {
        store.setOwner(app.id, newOwner.id, clock.now());
        deps.collaborators.removeUser(app.id, newOwner.id);
        deps.collaborators.insert({
          id: objectId(),
          app_id: app.id,
          email: oldOwner.email,
          user_id: oldOwner.id,
          status: 'accepted',
          invitation_token: objectId(),
          created_at: clock.now(),
        });
        const who = (u: UserRow) => ({ id: u.id, username: u.username, email: u.email });
        events.record({
          type: 'transfer_app',
          app,
          user,
          typeData: { old_owner: who(oldOwner), new_owner: who(newOwner) },
        });
      });
      service.accessLost(app);
      return defined(store.find(app.id), `app ${app.id}`);
    },

    updateSettings(
      user: UserRow,
      idOrName: string,
      input: { force_https?: boolean; sticky_session?: boolean; router_logs?: boolean; stack_id?: string },
    ): AppRow {
      const app = service.writableApp(user, idOrName, 'change the settings of the app');
      const changes: AppSettings = {};
      if (input.force_https !== undefined) changes.force_https = input.force_https ? 1 : 0;
      if (input.sticky_session !== undefined) changes.sticky_session = input.sticky_session ? 1 : 0;
      if (input.router_logs !== undefined) changes.router_logs = input.router_logs ? 1 : 0;
      if (input.stack_id !== undefined) {
        checkStack(input.stack_id);
        changes.stack_id = input.stack_id;
      }
      tx(deps.db, () => {
        store.update(app.id, changes, clock.now());
        if (changes.stack_id !== undefined && changes.stack_id !== app.stack_id) {
          events.record({
            type: 'stack_changed',
            app,
            user,
            typeData: {
              previous_stack_id: app.stack_id,
              current_stack_id: changes.stack_id,
              previous_stack_name: app.stack_id,
              current_stack_name: changes.stack_id,
            },
          });
        }
        const settings = Object.fromEntries(
          Object.entries(input).filter(([k, v]) => k !== 'stack_id' && v !== undefined),
        );
        if (Object.keys(settings).length) events.record({ type: 'edit_app', app, user, typeData: settings });
      });
      return defined(store.find(app.id), `app ${app.id}`);
    },

    setStatus(appId: string, status: string): void {
      store.setStatus(appId, status);
    },
  };
  return service;
}

export type AppsService = ReturnType<typeof createAppsService>;
