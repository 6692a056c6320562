import { ApiRoutes } from '../../http/api-routes.ts';
import { cronTaskList } from './cron.schemas.ts';
import { type CronService } from './cron.service.ts';

/** GET /v1/apps/:app/cron_tasks — go-scalingo CronTasks: `{"jobs":[…]}` at the root. */
export function cronRoutes(deps: { cron: CronService }) {
  const r = new ApiRoutes('cron');
  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/cron_tasks',
      summary: 'List the cron tasks of the deployed code (cron.json)',
      responses: { 200: cronTaskList },
    },
    (c) => c.json({ jobs: deps.cron.list(c.get('principal').user, c.get('app').id) }),
  );
  return r;
}
