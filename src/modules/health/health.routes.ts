import { type Db, pingDatabase } from '../../db/database.ts';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type ContainerRuntime } from '../../runtime/runtime.ts';
import { healthAnswer } from './health.schemas.ts';

/** GET /_emulator/health — each subsystem really probed: a query on the database, a ping of the engine. */
export function healthRoutes(deps: { db: Db; runtime: ContainerRuntime; startedAt: number; version: string }) {
  const r = new ApiRoutes('emulator');
  r.add(
    {
      method: 'get',
      path: '/_emulator/health',
      summary: "The emulator's health: database and container engine probed",
      auth: 'public',
      responses: { 200: healthAnswer, 503: healthAnswer },
    },
    async (c) => {
      let database: { status: 'ok'; file: string } | { status: 'unavailable'; error: string };
      try {
        pingDatabase(deps.db);
        database = { status: 'ok', file: deps.db.name };
      } catch (err) {
        database = { status: 'unavailable', error: (err as Error).message };
      }
      const engine = await deps.runtime.probe();
      const docker = engine.ok
        ? { status: 'ok', version: engine.version, api_version: engine.apiVersion }
        : { status: 'unavailable', error: engine.error };
      const ok = database.status === 'ok' && docker.status === 'ok';
      return c.json(
        {
          status: ok ? 'ok' : 'degraded',
          version: deps.version,
          uptime_seconds: Math.round((Date.now() - deps.startedAt) / 1000),
          subsystems: { database, docker },
        },
        database.status === 'ok' ? 200 : 503,
      );
    },
  );
  return r;
}
