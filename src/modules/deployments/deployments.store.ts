import { type Db } from '../../db/database.ts';
import { dependencyTag } from './buildpacks.ts';

export interface DeploymentRow {
  id: string;
  app_id: string;
  status: string;
  source: string;
  source_kind: string;
  git_ref: string | null;
  image: string | null;
  process_types: string; // JSON
  pusher_id: string | null;
  output: string;
  created_at: number;
  finished_at: number | null;
}

/** Deployments. Maps deployment id → source, status, image, process types and build output. */
export function createDeploymentsStore(db: Db) {
  const s = {
    insert: db.prepare(
      'INSERT INTO deployments (id, app_id, status, source, source_kind, git_ref, image, process_types, pusher_id, ' +
        'output, created_at, finished_at) ' +
        'VALUES (@id, @app_id, @status, @source, @source_kind, @git_ref, @image, @process_types, @pusher_id, @output, ' +
        '@created_at, @finished_at)',
    ),
    get: db.prepare<[string, string], DeploymentRow>('SELECT * FROM deployments WHERE app_id = ? AND id = ?'),
    byId: db.prepare<[string], DeploymentRow>('SELECT * FROM deployments WHERE id = ?'),
    count: db.prepare<[string], number>('SELECT COUNT(*) FROM deployments WHERE app_id = ?').pluck(),
    page: db.prepare<[string, number, number], DeploymentRow>(
      'SELECT * FROM deployments WHERE app_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?',
    ),
    update: db.prepare(
      'UPDATE deployments SET status = @status, image = @image, process_types = @process_types, output = @output, finished_at = @finished_at WHERE id = @id',
    ),
    unfinished: db.prepare<[], DeploymentRow>('SELECT * FROM deployments WHERE finished_at IS NULL'),
    lastSuccess: db.prepare<[string], DeploymentRow>(
      "SELECT * FROM deployments WHERE app_id = ? AND status = 'success' ORDER BY created_at DESC, rowid DESC LIMIT 1",
    ),
    images: db
      .prepare<[string], string>('SELECT DISTINCT image FROM deployments WHERE app_id = ? AND image IS NOT NULL')
      .pluck(),
  };
  return {
    insert: (row: DeploymentRow) => void s.insert.run(row),
    get: (appId: string, id: string) => s.get.get(appId, id),
    byId: (id: string) => s.byId.get(id),
    count: (appId: string) => s.count.get(appId) ?? 0,
    page: (appId: string, limit: number, offset: number) => s.page.all(appId, limit, offset),
    update: (row: Pick<DeploymentRow, 'id' | 'status' | 'image' | 'process_types' | 'output' | 'finished_at'>) =>
      void s.update.run(row),
    unfinished: () => s.unfinished.all(),
    /** The app's newest successful deployment (what its containers run), or undefined. */
    lastSuccess: (appId: string) => s.lastSuccess.get(appId),
    imagesOf: (appId: string) => s.images.all(appId),
    /** Every image an app's deletion removes: its deployments' images, and its dependency image once it deployed. */
    allImagesOf: (appId: string) => {
      const images = s.images.all(appId);
      return (s.count.get(appId) ?? 0) > 0 ? [...images, dependencyTag(appId)] : images;
    },
  };
}

export type DeploymentsStore = ReturnType<typeof createDeploymentsStore>;
