import { type Db } from '../../db/database.ts';

export interface FormationRow {
  app_id: string;
  type: string;
  id: string;
  amount: number;
  size: string;
  command: string;
}

export interface ContainerRow {
  id: string;
  app_id: string;
  type: string;
  type_index: number;
  size: string;
  command: string;
  engine_id: string | null;
  state: string;
  /**
   * The port of the container's address (ContainerInfo.address): its host port on publishHost, or its own port on
   * docker.network; runtime.addressOf({ engineId, port }) is where the emulator reaches it.
   */
  host_port: number | null;
  deployment_id: string | null;
  detached: number;
  created_at: number;
  deleted_at: number | null;
}

/** Formation and containers. Maps (app, type) → amount/size; container id → engine container and state. */
export function createContainersStore(db: Db) {
  const s = {
    formation: db.prepare<[string], FormationRow>('SELECT * FROM formation WHERE app_id = ? ORDER BY type'),
    upsertFormation: db.prepare(
      'INSERT INTO formation (app_id, type, id, amount, size, command) ' +
        'VALUES (@app_id, @type, @id, @amount, @size, @command) ON CONFLICT(app_id, type) DO UPDATE ' +
        'SET amount = excluded.amount, size = excluded.size, command = excluded.command',
    ),
    deleteFormation: db.prepare('DELETE FROM formation WHERE app_id = ? AND type = ?'),
    live: db.prepare<[string], ContainerRow>(
      'SELECT * FROM containers WHERE app_id = ? AND deleted_at IS NULL ORDER BY type, type_index',
    ),
    allLive: db.prepare<[], ContainerRow>('SELECT * FROM containers WHERE deleted_at IS NULL'),
    byId: db.prepare<[string], ContainerRow>('SELECT * FROM containers WHERE id = ?'),
    byEngine: db.prepare<[string], ContainerRow>('SELECT * FROM containers WHERE engine_id = ?'),
    insert: db.prepare(
      'INSERT INTO containers (id, app_id, type, type_index, size, command, engine_id, state, host_port, ' +
        'deployment_id, detached, created_at, deleted_at) ' +
        'VALUES (@id, @app_id, @type, @type_index, @size, @command, @engine_id, @state, @host_port, @deployment_id, ' +
        '@detached, @created_at, @deleted_at)',
    ),
    setEngine: db.prepare('UPDATE containers SET engine_id = ?, host_port = ?, state = ? WHERE id = ?'),
    setState: db.prepare('UPDATE containers SET state = ? WHERE id = ?'),
    markDeleted: db.prepare('UPDATE containers SET deleted_at = ?, state = ?, host_port = NULL WHERE id = ?'),
    maxOneOff: db
      .prepare<[string], number>(
        "SELECT COALESCE(MAX(type_index), 0) FROM containers WHERE app_id = ? AND type = 'one-off'",
      )
      .pluck(),
  };
  return {
    formation: (appId: string) => s.formation.all(appId),
    upsertFormation: (row: FormationRow) => void s.upsertFormation.run(row),
    deleteFormation: (appId: string, type: string) => void s.deleteFormation.run(appId, type),
    liveContainers: (appId: string) => s.live.all(appId),
    allLiveContainers: () => s.allLive.all(),
    container: (id: string) => s.byId.get(id),
    byEngineId: (engineId: string) => s.byEngine.get(engineId),
    insertContainer: (row: ContainerRow) => void s.insert.run(row),
    setEngine: (id: string, engineId: string | null, hostPort: number | null, state: string) =>
      void s.setEngine.run(engineId, hostPort, state, id),
    setState: (id: string, state: string) => void s.setState.run(state, id),
    markDeleted: (id: string, at: number, state = 'stopped') => void s.markDeleted.run(at, state, id),
    nextOneOffIndex: (appId: string) => (s.maxOneOff.get(appId) ?? 0) + 1,
  };
}

export type ContainersStore = ReturnType<typeof createContainersStore>;
