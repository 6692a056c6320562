import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock } from '../../shared/clock.ts';
import { defined } from '../../shared/defined.ts';
import { objectId, secret } from '../../shared/ids.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { type EventsService } from '../events/events.service.ts';
import { type CollaboratorRow, type CollaboratorsStore } from './collaborators.store.ts';

export interface CollaboratorsServiceDeps {
  db: Db;
  store: CollaboratorsStore;
  apps: AppsService;
  events: EventsService;
  clock: Clock;
  userByEmail: (email: string) => UserRow | undefined;
  userById: (id: string) => UserRow | undefined;
  invitationUrl: (token: string) => string;
}

export function createCollaboratorsService(deps: CollaboratorsServiceDeps) {
  const { store, events } = deps;
  const who = (u: UserRow) => ({ id: u.id, username: u.username, email: u.email });

  function toJson(row: CollaboratorRow, withLink = false) {
    const u = row.user_id ? deps.userById(row.user_id) : undefined;
    return {
      id: row.id,
      app_id: row.app_id,
      email: row.email,
      username: u && row.status === 'accepted' ? u.username : 'n/a',
      status: row.status,
      user_id: row.status === 'accepted' ? row.user_id : null,
      is_limited: row.is_limited === 1,
      ...(withLink ? { invitation_link: deps.invitationUrl(row.invitation_token) } : {}),
    };
  }

  return {
    toJson,
    list(user: UserRow, appKey: string) {
      const app = deps.apps.visibleApp(user, appKey);
      return store.ofApp(app.id).map((r) => toJson(r));
    },

    /**
     * Invites by e-mail. The emulator knows every user (they come from the config): an invitation
     * to a known user is accepted at once; any other stays pending until its link is opened.
     */
    invite(user: UserRow, appKey: string, email: string, limited = false) {
      const app = deps.apps.ownedApp(user, appKey);
      const owner = defined(deps.userById(app.owner_id), `owner of app ${app.id}`);
      if (owner.email === email) throw ApiError.invalid('email', 'is the e-mail of the owner of the app');
      if (store.byEmail(app.id, email)) throw ApiError.invalid('email', 'has already been invited to this app');
      const invitee = deps.userByEmail(email);
      const row: CollaboratorRow = {
        id: objectId(deps.clock.now()),
        app_id: app.id,
        email,
        user_id: invitee?.id ?? null,
        status: invitee ? 'accepted' : 'pending',
        invitation_token: secret(20),
        created_at: deps.clock.now(),
        is_limited: limited ? 1 : 0,
      };
      tx(deps.db, () => {
        store.insert(row);
        const data = {
          collaborator: {
            username: invitee?.username ?? 'n/a',
            email,
            id: row.id,
            inviter: who(user),
            is_limited: limited,
          },
        };
        events.record({ type: 'new_collaborator', app, user, typeData: data });
        if (invitee) events.record({ type: 'accept_collaborator', app, user: invitee, typeData: data });
      });
      return toJson(row, true);
    },

    accept(user: UserRow, token: string): AppRow {
      const row = store.byToken(token);
      if (!row) throw ApiError.notFound('collaborator', 'invitation not found');
      const app = defined(deps.apps.find(row.app_id), `app ${row.app_id}`);
      if (app.owner_id === user.id)
        throw ApiError.invalid('token', 'the owner of the app cannot accept an invitation to it');
      if (row.status !== 'accepted') {
        tx(deps.db, () => {
          store.accept(row.id, user.id);
          events.record({
            type: 'accept_collaborator',
            app,
            user,
            typeData: { collaborator: { ...who(user), is_limited: row.is_limited === 1 } },
          });
        });
      }
      return app;
    },

    /** PATCH — the role: limited (the platform's Limited Collaborator) or full. Owner only, as invitations. */
    setLimited(user: UserRow, appKey: string, id: string, limited: boolean) {
      const app = deps.apps.ownedApp(user, appKey);
      const row = store.byId(app.id, id);
      if (!row) throw ApiError.notFound('collaborator');
      if ((row.is_limited === 1) !== limited) {
        tx(deps.db, () => {
          store.setLimited(row.id, limited);
          const u = row.user_id ? deps.userById(row.user_id) : undefined;
          const collaborator = {
            id: row.id,
            email: row.email,
            username: u && row.status === 'accepted' ? u.username : '',
            inviter: who(user),
            is_limited: limited,
          };
          events.record({ type: 'change_collaborator_role', app, user, typeData: { collaborator } });
        });
      }
      return toJson(defined(store.byId(app.id, id), `collaborator ${id}`));
    },

    remove(user: UserRow, appKey: string, id: string): void {
      const app = deps.apps.ownedApp(user, appKey);
      const row = store.byId(app.id, id);
      if (!row) throw ApiError.notFound('collaborator');
      tx(deps.db, () => {
        store.delete(row.id);
        events.record({
          type: 'delete_collaborator',
          app,
          user,
          typeData: { collaborator: { id: row.id, email: row.email, username: toJson(row).username } },
        });
      });
      deps.apps.accessLost(app);
    },
  };
}

export type CollaboratorsService = ReturnType<typeof createCollaboratorsService>;
