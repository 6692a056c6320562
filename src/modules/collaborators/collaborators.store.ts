import { type Db } from '../../db/database.ts';

export interface CollaboratorRow {
  id: string;
  app_id: string;
  email: string;
  user_id: string | null;
  status: 'pending' | 'accepted';
  invitation_token: string;
  created_at: number;
  /** 1: the platform's Limited Collaborator role. */
  is_limited?: number;
}

/** Collaborators. Maps (app, email) → invitation; invitation token → invitation. */
export function createCollaboratorsStore(db: Db) {
  const s = {
    ofApp: db.prepare<[string], CollaboratorRow>(
      'SELECT * FROM collaborators WHERE app_id = ? ORDER BY created_at, email',
    ),
    byId: db.prepare<[string, string], CollaboratorRow>('SELECT * FROM collaborators WHERE app_id = ? AND id = ?'),
    byEmail: db.prepare<[string, string], CollaboratorRow>(
      'SELECT * FROM collaborators WHERE app_id = ? AND email = ?',
    ),
    byToken: db.prepare<[string], CollaboratorRow>('SELECT * FROM collaborators WHERE invitation_token = ?'),
    acceptedUser: db.prepare<[string, string], CollaboratorRow>(
      "SELECT * FROM collaborators WHERE app_id = ? AND user_id = ? AND status = 'accepted'",
    ),
    insert: db.prepare(
      'INSERT INTO collaborators (id, app_id, email, user_id, status, invitation_token, created_at, is_limited) ' +
        'VALUES (@id, @app_id, @email, @user_id, @status, @invitation_token, @created_at, @is_limited)',
    ),
    setLimited: db.prepare('UPDATE collaborators SET is_limited = ? WHERE id = ?'),
    accept: db.prepare("UPDATE collaborators SET status = 'accepted', user_id = ? WHERE id = ?"),
    delete: db.prepare('DELETE FROM collaborators WHERE id = ?'),
    deleteUser: db.prepare('DELETE FROM collaborators WHERE app_id = ? AND user_id = ?'),
  };
  return {
    ofApp: (appId: string) => s.ofApp.all(appId),
    byId: (appId: string, id: string) => s.byId.get(appId, id),
    byEmail: (appId: string, email: string) => s.byEmail.get(appId, email),
    byToken: (token: string) => s.byToken.get(token),
    isAcceptedCollaborator: (appId: string, userId: string) => s.acceptedUser.get(appId, userId) !== undefined,
    insert: (row: CollaboratorRow) => void s.insert.run({ is_limited: 0, ...row }),
    /** Accepted and limited: the role whose restrictions `apps.writableApp` enforces. */
    isLimitedCollaborator: (appId: string, userId: string) => s.acceptedUser.get(appId, userId)?.is_limited === 1,
    setLimited: (id: string, limited: boolean) => void s.setLimited.run(limited ? 1 : 0, id),
    accept: (id: string, userId: string) => void s.accept.run(userId, id),
    delete: (id: string) => void s.delete.run(id),
    removeUser: (appId: string, userId: string) => void s.deleteUser.run(appId, userId),
  };
}

export type CollaboratorsStore = ReturnType<typeof createCollaboratorsStore>;
