import { Hono } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import type { CronService } from './cron.service.ts';

/** GET /v1/apps/:app/cron_tasks — go-scalingo CronTasks: `{"jobs":[…]}` at the root. */
export function cronRoutes(deps: { cron: CronService }) {
  const r = new Hono<AppEnv>();
  r.get('/v1/apps/:app/cron_tasks', (c) => c.json({ jobs: deps.cron.list(c.get('principal').user, c.req.param('app')) }));
  return r;
}
