import { type Context } from 'hono';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { type Recommended } from './recommended.ts';
import { realtimeStats, recommendedQuery, seriesQuery, statPoint, statSeries } from './stats.schemas.ts';
import { type StatsService } from './stats.service.ts';

/**
 * #23–#25. Only the `/v1/apps/:app/...` form is served: the reference's unprefixed path text names no
 * app, and every sample request (and the npm client) uses the prefixed form (docs/fidelity.md).
 */
export function statsRoutes(deps: { stats: StatsService; recommended: Recommended }) {
  const r = new ApiRoutes('stats');

  // #24 real-time figures read from the engine now; a stopped app has none.
  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/stats',
      summary: '#24 Get the real-time stats of the running containers',
      responses: { 200: realtimeStats },
    },
    async (c) => c.json(await deps.stats.realtime(c.get('app'))),
  );

  // #25 before the series routes: `recommended_value` is not a container type.
  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/stats/:metric/recommended_value',
      summary: '#25 Get the recommended value of a metric',
      query: recommendedQuery,
      responses: { 200: statPoint },
    },
    (c, { params, query }) =>
      c.json(deps.recommended.value(c.get('app'), params.metric, query.container_type || undefined)),
  );

  // #23 the one bare-array endpoint: over the app, one container type, or one container.
  const series = (
    c: Context<AppEnv>,
    query: { since?: string; status_code?: string },
    metric: string,
    type?: string,
    index?: string,
  ) =>
    c.json(deps.stats.series(c.get('app'), metric, { type, index, since: query.since, statusCode: query.status_code }));
  const declare = { method: 'get', query: seriesQuery, responses: { 200: statSeries } } as const;
  r.add(
    { ...declare, path: '/v1/apps/:app/stats/:metric', summary: '#23 Get a metric series of an app' },
    (c, { params, query }) => series(c, query, params.metric),
  );
  r.add(
    {
      ...declare,
      path: '/v1/apps/:app/stats/:metric/:container',
      summary: '#23 Get a metric series of one container type',
    },
    (c, { params, query }) => series(c, query, params.metric, params.container),
  );
  r.add(
    {
      ...declare,
      path: '/v1/apps/:app/stats/:metric/:container/:index',
      summary: '#23 Get a metric series of one container',
    },
    (c, { params, query }) => series(c, query, params.metric, params.container, params.index),
  );
  return r;
}
