import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import type { AppsService } from '../apps/apps.service.ts';
import type { StatsService } from './stats.service.ts';
import type { Recommended } from './recommended.ts';
import { pathParam } from '../../http/validate.ts';

/**
 * #23–#25. Only the `/v1/apps/:app/...` form is served: the reference's unprefixed path text names no
 * app, and every sample request (and the npm client) uses the prefixed form (docs/fidelity.md).
 */
export function statsRoutes(deps: { apps: AppsService; stats: StatsService; recommended: Recommended }) {
  const r = new Hono<AppEnv>();
  const app = (c: Context<AppEnv>) => deps.apps.visibleApp(c.get('principal').user, pathParam(c, 'app'));

  // #24 real-time figures read from the engine now; a stopped app has none.
  r.get('/v1/apps/:app/stats', async (c) => c.json(await deps.stats.realtime(app(c))));

  // #25 before the series routes: `recommended_value` is not a container type.
  r.get('/v1/apps/:app/stats/:metric/recommended_value', (c) =>
    c.json(deps.recommended.value(app(c), c.req.param('metric'), c.req.query('container_type') || undefined)),
  );

  // #23 the one bare-array endpoint.
  const series = (c: Context<AppEnv>) =>
    c.json(
      deps.stats.series(app(c), pathParam(c, 'metric'), {
        type: c.req.param('container'),
        index: c.req.param('index'),
        since: c.req.query('since'),
        statusCode: c.req.query('status_code'),
      }),
    );
  r.get('/v1/apps/:app/stats/:metric', series);
  r.get('/v1/apps/:app/stats/:metric/:container', series);
  r.get('/v1/apps/:app/stats/:metric/:container/:index', series);
  return r;
}
