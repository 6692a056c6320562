// The Scalingo Scheduler: the jobs of the deployed code's cron.json run on schedule (UTC) as detached
// one-off containers started by the platform user, so their output lands in the app's logs. A job is
// stopped when it reaches min(15 minutes, its interval), as on the platform. Schedules are re-read after
// each deployment (and every `syncMs`, which also drops deleted apps); they live in memory, the last run
// of each job is stored.
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cron } from 'croner';
import { ApiError } from '../../http/errors.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { type Logger } from '../../shared/logger.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { type EventRow } from '../events/events.store.ts';
import { type CronStore } from './cron.store.ts';
import { CRON_JSON_MAX_BYTES, type CronJob, type CronRules, intervalOf, parseCronJson } from './cron-json.ts';

export interface CronServiceDeps {
  store: CronStore;
  apps: AppsService;
  clock: Clock;
  logger: Logger;
  rules: CronRules;
  /** A job is stopped after min(maxRunMs, its interval). */
  maxRunMs: number;
  syncMs: number;
  /** The platform's own user: scheduled runs are its one-offs. */
  runUser: () => UserRow;
  runOneOff: (
    user: UserRow,
    app: AppRow,
    input: { command: string; size: string | null; detached: true },
  ) => Promise<{ row: { id: string } }>;
  stopOneOff: (user: UserRow, app: AppRow, containerId: string) => void;
}

export function createCronService(deps: CronServiceDeps) {
  const { store, logger } = deps;
  // `${appId}\0${deploymentId}\0${command}` → its scheduled Cron.
  const scheduled = new Map<string, Cron>();
  const kills = new Set<NodeJS.Timeout>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;

  function hasSchedules(appId: string): boolean {
    const prefix = `${appId}\0`;
    for (const key of scheduled.keys()) if (key.startsWith(prefix)) return true;
    return false;
  }

  function jobsOf(app: AppRow): CronJob[] | null {
    if (!app.last_deployment_id) return null;
    const json = store.jobs(app.last_deployment_id);
    return json === undefined ? null : (JSON.parse(json) as CronJob[]);
  }

  async function fire(appId: string, job: CronJob): Promise<void> {
    const app = deps.apps.find(appId);
    if (!app || stopped) return;
    const user = deps.runUser();
    try {
      const { row } = await deps.runOneOff(user, app, { command: job.run, size: job.size, detached: true });
      store.setLastRun(app.id, job.command, deps.clock.now());
      const t = setTimeout(
        () => {
          kills.delete(t);
          const fresh = deps.apps.find(appId);
          if (!fresh) return;
          try {
            deps.stopOneOff(user, fresh, row.id);
          } catch {
            // already over
          }
        },
        Math.min(deps.maxRunMs, intervalOf(job.expression)),
      );
      t.unref();
      kills.add(t);
    } catch (err) {
      logger.warn({ err, app: app.name, job: job.command }, 'cron: the scheduled job could not start');
    }
  }

  /** Brings the schedules in line with every app's last deployment. */
  function sync(): void {
    if (stopped) return;
    const wanted = new Map<string, { appId: string; job: CronJob }>();
    for (const app of deps.apps.all()) {
      for (const job of jobsOf(app) ?? [])
        wanted.set(`${app.id}\0${app.last_deployment_id}\0${job.command}`, { appId: app.id, job });
    }
    for (const [key, cron] of scheduled) {
      if (wanted.has(key)) continue;
      cron.stop();
      scheduled.delete(key);
    }
    for (const [key, { appId, job }] of wanted) {
      if (scheduled.has(key)) continue;
      scheduled.set(
        key,
        new Cron(
          job.expression,
          { timezone: 'UTC', protect: true, catch: (err) => logger.warn({ err }, 'cron: job failed') },
          () => fire(appId, job),
        ),
      );
    }
  }

  return {
    /**
     * Build hook: reads the code's cron.json (if any) for this deployment. A file breaking the rules
     * throws, which fails the build with the message, as the platform fails the deployment.
     */
    recordFromBuild(appId: string, deploymentId: string, codeDir: string): CronJob[] | null {
      const file = join(codeDir, 'cron.json');
      if (!existsSync(file)) return null;
      // lstat: a link (to a device, a FIFO, outside the code) is refused rather than followed.
      const st = lstatSync(file);
      if (!st.isFile()) throw new Error('cron.json must be a regular file');
      if (st.size > CRON_JSON_MAX_BYTES) throw new Error(`cron.json is larger than ${CRON_JSON_MAX_BYTES / 1024} KB`);
      const jobs = parseCronJson(readFileSync(file, 'utf8'), deps.rules);
      store.save(deploymentId, appId, JSON.stringify(jobs));
      return jobs;
    },

    /** GET /v1/apps/:app/cron_tasks — 404 when the deployed code has no cron.json (the CLI shows an empty table). */
    list(user: UserRow, appKey: string) {
      const app = deps.apps.visibleApp(user, appKey);
      const jobs = jobsOf(app);
      if (!jobs) throw ApiError.notFound('cron_tasks', 'no cron task: the deployed code has no cron.json');
      return jobs.map((j) => {
        const c = new Cron(j.expression, { paused: true, timezone: 'UTC' });
        const next = c.nextRun(new Date(deps.clock.now()));
        c.stop();
        return {
          command: j.command,
          ...(j.size ? { size: j.size } : {}),
          last_execution_date: isoDate(store.lastRun(app.id, j.command)),
          next_execution_date: next ? next.toISOString() : null,
        };
      });
    },

    /** Deployments and deletions change the schedules at once. */
    onEvent(e: EventRow): void {
      // A deletion changes the schedules only when the app had some: no pass over every app otherwise.
      if (e.type === 'deployment' || (e.type === 'delete_app' && e.app_id && hasSchedules(e.app_id)))
        queueMicrotask(sync);
    },

    start(): void {
      stopped = false;
      sync();
      timer = setInterval(sync, deps.syncMs);
      timer.unref();
    },
    stop(): void {
      stopped = true;
      if (timer) clearInterval(timer);
      for (const c of scheduled.values()) c.stop();
      scheduled.clear();
      for (const t of kills) clearTimeout(t);
      kills.clear();
    },
    /** For tests: the schedules in force. */
    scheduledCount: () => scheduled.size,
  };
}

export type CronService = ReturnType<typeof createCronService>;
