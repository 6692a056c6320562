import { Hono } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import type { AppsService } from '../apps/apps.service.ts';
import type { EventsService } from '../events/events.service.ts';
import { dropBuildCache } from './build-cache.ts';

/**
 * `DELETE /v1/apps/:app/caches/deployment` (go-scalingo DeploymentsCacheReset, expects 204): the next
 * build starts from nothing. The cache also goes with a stack change and with the app.
 */
export function cachesRoutes(deps: { apps: AppsService; events: EventsService; stateDir: string }) {
  const r = new Hono<AppEnv>();

  deps.events.onRecord((e) => {
    if (e.app_id && (e.type === 'stack_changed' || e.type === 'delete_app')) void dropBuildCache(deps.stateDir, e.app_id).catch(() => undefined);
  });

  r.delete('/v1/apps/:app/caches/deployment', async (c) => {
    const app = deps.apps.visibleApp(c.get('principal').user, c.req.param('app'));
    await dropBuildCache(deps.stateDir, app.id);
    return c.body(null, 204);
  });

  return r;
}
