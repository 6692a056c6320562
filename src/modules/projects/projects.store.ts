import { type Db } from '../../db/database.ts';

/** A project: maps project id → owner, name and whether it is the owner's default. */
export interface ProjectRow {
  id: string;
  owner_id: string;
  name: string;
  is_default: number;
  created_at: number;
  updated_at: number;
}

export function createProjectsStore(db: Db) {
  const q = {
    insert: db.prepare<ProjectRow>(
      'INSERT INTO projects (id, owner_id, name, is_default, created_at, updated_at) VALUES (@id, @owner_id, @name, @is_default, @created_at, @updated_at)',
    ),
    byId: db.prepare<[string], ProjectRow>('SELECT * FROM projects WHERE id = ?'),
    byOwner: db.prepare<[string], ProjectRow>('SELECT * FROM projects WHERE owner_id = ? ORDER BY created_at, id'),
    byName: db.prepare<[string, string], ProjectRow>('SELECT * FROM projects WHERE owner_id = ? AND name = ?'),
    defaultOf: db.prepare<[string], ProjectRow>('SELECT * FROM projects WHERE owner_id = ? AND is_default = 1'),
    update: db.prepare<ProjectRow>(
      'UPDATE projects SET name = @name, is_default = @is_default, updated_at = @updated_at WHERE id = @id',
    ),
    clearDefault: db.prepare<[string]>('UPDATE projects SET is_default = 0 WHERE owner_id = ?'),
    remove: db.prepare<[string]>('DELETE FROM projects WHERE id = ?'),
    countApps: db.prepare<[string], number>('SELECT COUNT(*) FROM apps WHERE project_id = ?').pluck(),
    appProject: db.prepare<[string], string | null>('SELECT project_id FROM apps WHERE id = ?').pluck(),
    setAppProject: db.prepare<[string | null, string]>('UPDATE apps SET project_id = ? WHERE id = ?'),
    // Apps with no project yet belong to their owner's default project.
    pinUnassigned: db.prepare<[string, string]>(
      'UPDATE apps SET project_id = ? WHERE owner_id = ? AND project_id IS NULL',
    ),
  };
  return {
    insert: (row: ProjectRow) => void q.insert.run(row),
    byId: (id: string) => q.byId.get(id),
    byOwner: (ownerId: string) => q.byOwner.all(ownerId),
    byName: (ownerId: string, name: string) => q.byName.get(ownerId, name),
    defaultOf: (ownerId: string) => q.defaultOf.get(ownerId),
    update: (row: ProjectRow) => void q.update.run(row),
    clearDefault: (ownerId: string) => void q.clearDefault.run(ownerId),
    remove: (id: string) => void q.remove.run(id),
    countApps: (id: string) => q.countApps.get(id) ?? 0,
    pinUnassigned: (ownerId: string, projectId: string) => void q.pinUnassigned.run(projectId, ownerId),
    appProjectId: (appId: string) => q.appProject.get(appId) ?? null,
    setAppProject: (appId: string, projectId: string | null) => void q.setAppProject.run(projectId, appId),
  };
}

export type ProjectsStore = ReturnType<typeof createProjectsStore>;
