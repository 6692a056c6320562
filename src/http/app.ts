import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv } from './env.ts';
import type { UserRow } from '../modules/auth/principal.ts';
import { ApiError, errorResponse } from './errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { Clock } from '../shared/clock.ts';
import type { AuthService } from '../modules/auth/auth.service.ts';
import { requestId } from './middleware/request-id.ts';
import { accessLog } from './middleware/access-log.ts';
import { jsonOnly, limitBody } from './middleware/json-only.ts';
import { authenticate } from './middleware/authenticate.ts';
import { rateLimit } from './middleware/rate-limit.ts';
import { faultMiddleware, type Faults } from '../modules/control/faults.ts';
import { isEngineUnreachable, ENGINE_UNREACHABLE_MESSAGE } from '../runtime/runtime.ts';

export interface HttpAppDeps {
  logger: Logger;
  clock: Clock;
  auth: AuthService;
  bodyLimitBytes: number;
  rateLimit: { enabled: boolean; perMinute: number };
  /** API faults of the control plane (latency, status, dropped connection). */
  faults?: Faults;
  /**
   * Checks that the user may see the app of a `/v1/apps/:app/…` route (throws the 404): run before
   * the route reads its body, so another user's app is a 404 whatever is sent, never a 422 first.
   */
  appAccess?: (user: UserRow, appKey: string) => unknown;
  /** Route groups of every area, mounted in order (more specific paths first). */
  routes: Hono<AppEnv>[];
}

export function createHttpApp(deps: HttpAppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // Order matters:
  // 1. request id + child logger, so every later line (and a 500) carries the id;
  //    then injected API faults (control plane), seen by the client as the platform's own failures;
  // 2. access log, timing everything below;
  // 3. authentication of every /v1 route (a few public ones are listed in authenticate.ts): a client
  //    without credentials learns nothing else (401 before 415/413/404);
  // 4. JSON-only and body size limits on the API, before anything reads a body;
  // 5. rate limiting per token, which needs the principal.
  app.use('*', requestId(deps.logger));
  if (deps.faults) app.use('*', faultMiddleware(deps.faults));
  app.use('*', accessLog());
  app.use('/v1/*', authenticate(deps.auth));
  app.use('/v1/*', jsonOnly());
  app.use('/v1/*', limitBody(deps.bodyLimitBytes));
  if (deps.rateLimit.enabled) app.use('/v1/*', rateLimit({ perMinute: deps.rateLimit.perMinute, clock: deps.clock }));
  const appAccess = deps.appAccess;
  if (appAccess) {
    app.use('/v1/apps/:app/*', async (c, next) => {
      const p = c.get('principal');
      // Hono's `/*` also matches `/v1/apps/<x>` itself (e.g. /v1/apps/collaboration): sub-paths only.
      if (p && /^\/v1\/apps\/[^/]+\/./.test(c.req.path)) appAccess(p.user, c.req.param('app'));
      await next();
    });
  }

  for (const r of deps.routes) app.route('/', r);

  app.notFound((c) => c.json({ resource: 'route', error: `no route matches ${c.req.method} ${c.req.path}` }, 404));

  // The only place that writes an error body.
  app.onError((err, c) => {
    if (err instanceof ApiError) return errorResponse(c, err);
    if (err instanceof HTTPException) {
      const status = err.status;
      return errorResponse(c, new ApiError(status, { error: err.message || 'request refused' }));
    }
    // Docker down: the endpoints that need it answer 503 with a plain explanation.
    if (isEngineUnreachable(err)) return errorResponse(c, ApiError.unavailable(ENGINE_UNREACHABLE_MESSAGE));
    const log = c.get('log')?.() ?? deps.logger;
    log.error({ err, method: c.req.method, path: c.req.path }, 'unexpected error');
    return errorResponse(c, ApiError.internal(`internal error, request id ${c.get('requestId') ?? 'unknown'}`));
  });

  return app;
}
