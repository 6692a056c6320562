import { ApiRoutes } from '../../http/api-routes.ts';
import type { EventsService } from '../events/events.service.ts';
import { dropBuildCache } from './build-cache.ts';

/**
 * `DELETE /v1/apps/:app/caches/deployment` (go-scalingo DeploymentsCacheReset, expects 204): the next
 * build starts from nothing. The cache also goes with a stack change and with the app.
 */
// `apps`: the `:app` is loaded by the route declaration (api-routes.ts).
export function cachesRoutes(deps: { events: EventsService; stateDir: string }) {
  const r = new ApiRoutes('caches');

  deps.events.onRecord((e) => {
    if (e.app_id && (e.type === 'stack_changed' || e.type === 'delete_app'))
      void dropBuildCache(deps.stateDir, e.app_id).catch(() => undefined);
  });

  r.add(
    {
      method: 'delete',
      path: '/v1/apps/:app/caches/deployment',
      summary: "Reset an app's build cache",
      responses: { 204: null },
    },
    async (c) => {
      await dropBuildCache(deps.stateDir, c.get('app').id);
      return c.body(null, 204);
    },
  );

  return r;
}
