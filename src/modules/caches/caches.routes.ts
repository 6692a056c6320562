import { ApiRoutes } from '../../http/api-routes.ts';
import { dropBuildCache } from './build-cache.ts';

/**
 * `DELETE /v1/apps/:app/caches/deployment` (go-scalingo DeploymentsCacheReset, expects 204): the next
 * build starts from nothing. The cache also goes with a stack change and with the app (dropBuildCacheOnEvent).
 */
// `apps`: the `:app` is loaded by the route declaration (api-routes.ts).
export function cachesRoutes(deps: { stateDir: string }) {
  const r = new ApiRoutes('caches');

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
