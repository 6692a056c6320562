import { type Db } from '../../db/database.ts';

/** Cron jobs. Maps deployment id → its cron.json jobs; (app, job command) → when it last ran. */
export function createCronStore(db: Db) {
  const s = {
    save: db.prepare('INSERT OR REPLACE INTO deployment_crons (deployment_id, app_id, jobs) VALUES (?, ?, ?)'),
    jobs: db.prepare<[string], string>('SELECT jobs FROM deployment_crons WHERE deployment_id = ?').pluck(),
    lastRun: db
      .prepare<[string, string], number>('SELECT last_run_at FROM cron_runs WHERE app_id = ? AND command = ?')
      .pluck(),
    setLastRun: db.prepare('INSERT OR REPLACE INTO cron_runs (app_id, command, last_run_at) VALUES (?, ?, ?)'),
  };
  return {
    save: (deploymentId: string, appId: string, jobsJson: string) => void s.save.run(deploymentId, appId, jobsJson),
    /** The jobs JSON of a deployment; undefined when its code had no cron.json. */
    jobs: (deploymentId: string) => s.jobs.get(deploymentId),
    lastRun: (appId: string, command: string) => s.lastRun.get(appId, command),
    setLastRun: (appId: string, command: string, at: number) => void s.setLastRun.run(appId, command, at),
  };
}

export type CronStore = ReturnType<typeof createCronStore>;
