import { OpenAPIHono } from '@hono/zod-openapi';
import { type ErrorHandler, type Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';
import { type AppRow } from '../modules/apps/apps.store.ts';
import { type AuthService } from '../modules/auth/auth.service.ts';
import { type UserRow } from '../modules/auth/principal.ts';
import { type Faults, faultMiddleware } from '../modules/control/faults.ts';
import { ENGINE_UNREACHABLE_MESSAGE, EngineUnavailableError } from '../runtime/runtime.ts';
import { type Clock } from '../shared/clock.ts';
import { isDiskFull } from '../shared/disk-full.ts';
import { type Logger } from '../shared/logger.ts';
import { ApiRoutes, type DeclaredRoute, type RouteAuth } from './api-routes.ts';
import { type AppEnv } from './env.ts';
import { ApiError, errorResponse } from './errors.ts';
import { MemoRouter } from './memo-router.ts';
import { accessLog } from './middleware/access-log.ts';
import { authenticate } from './middleware/authenticate.ts';
import { responseConformance } from './middleware/conformance.ts';
import { bodyGuards } from './middleware/json-only.ts';
import { rateLimit } from './middleware/rate-limit.ts';
import { requestId, requestLogger } from './middleware/request-id.ts';
import { serveOpenApiDocument } from './openapi-document.ts';
import { chainOfMatch } from './sync-chain.ts';

export interface HttpAppDeps {
  logger: Logger;
  /** The clock of the rate-limit windows: real time (they protect the process, not platform time). */
  wallClock: Clock;
  auth: AuthService;
  bodyLimitBytes: number;
  rateLimit: { enabled: boolean; perMinute: number };
  /** API faults of the control plane (latency, status, dropped connection). */
  faults?: Faults;
  /**
   * Checks that the user may see the app of a `/v1/apps/:app/…` route (throws the 404): run before
   * the route reads its body, so another user's app is a 404 whatever is sent, never a 422 first.
   */
  appAccess?: (user: UserRow, appKey: string) => AppRow;
  /** Route groups of every area, mounted in order (more specific paths first). */
  routes: (ApiRoutes | Hono<AppEnv>)[];
  /** Check every answer against its declared schema (a mismatch becomes a 500): the test suite turns it on. */
  validateResponses?: boolean;
  /** The emulator's version, written in the OpenAPI document. */
  version?: string;
}

export function createHttpApp(deps: HttpAppDeps): OpenAPIHono<AppEnv> {
  // The only place that writes an error body.
  const onError: ErrorHandler<AppEnv> = (err, c) => {
    if (err instanceof ApiError) return errorResponse(c, err);
    if (err instanceof HTTPException) {
      const status = err.status;
      return errorResponse(c, new ApiError(status, { error: err.message || 'request refused' }));
    }
    // Docker down: the endpoints that need it answer 503 with a plain explanation.
    if (err instanceof EngineUnavailableError)
      return errorResponse(c, ApiError.unavailable(ENGINE_UNREACHABLE_MESSAGE));
    const log = requestLogger(c, deps.logger);
    if (isDiskFull(err)) {
      log.warn({ err, method: c.req.method, path: c.req.path }, 'disk full: write refused');
      return errorResponse(c, ApiError.insufficientStorage());
    }
    log.error({ err, method: c.req.method, path: c.req.path }, 'unexpected error');
    return errorResponse(c, ApiError.internal(`internal error, request id ${c.get('requestId') ?? 'unknown'}`));
  };
  // Hono's default router, its answers remembered per method and path (memo-router.ts), each match of several
  // handlers run as one chain, synchronously while its steps are (sync-chain.ts).
  const app = new OpenAPIHono<AppEnv>({
    router: new MemoRouter(new SmartRouter({ routers: [new RegExpRouter(), new TrieRouter()] }), chainOfMatch(onError)),
  });
  const declared = deps.routes.flatMap((r) => (r instanceof ApiRoutes ? r.declared : []));
  const authOf = routeAuthTable(declared);

  // Order matters:
  // 1. request id, so every later line (and a 500) carries it (requestLogger);
  //    then injected API faults (control plane), seen by the client as the platform's own failures;
  // 2. access log, timing everything below (when the logger writes debug lines: its level is fixed at start);
  // 3. authentication of every /v1 route (except the routes declared `auth: 'public'`, read from the declarations): a client
  //    without credentials learns nothing else (401 before 415/413/404);
  // 4. JSON-only and body size limits on the API, before anything reads a body;
  // 5. rate limiting per token, which needs the principal.
  app.use('*', requestId());
  if (deps.faults) app.use('*', faultMiddleware(deps.faults));
  if (deps.logger.isLevelEnabled('debug')) app.use('*', accessLog(deps.logger));
  if (deps.validateResponses) app.use('*', responseConformance(deps.logger));
  app.use('/v1/*', authenticate(deps.auth, authOf));
  app.use('/v1/*', bodyGuards(deps.bodyLimitBytes));
  if (deps.rateLimit.enabled)
    app.use('/v1/*', rateLimit({ perMinute: deps.rateLimit.perMinute, clock: deps.wallClock }));
  const appAccess = deps.appAccess;
  if (appAccess) {
    app.use('/v1/apps/:app/*', (c, next) => {
      const p = c.get('principal');
      // The loader declared routes use for their `:app` (api-routes.ts); `/*` covers `/v1/apps/:app` itself too.
      c.set('appLoader', appAccess);
      // Hono's `/*` also matches `/v1/apps/<x>` itself (e.g. /v1/apps/collaboration): sub-paths only.
      // Undeclared sub-paths of another user's app are a 404 of the app too, as before.
      if (p && hasSubPath(c.req.path)) c.set('app', appAccess(p.user, c.req.param('app')));
      return next();
    });
  }

  for (const r of deps.routes) app.route('/', r);
  serveOpenApiDocument(app, deps.version ?? '0.0.0', declared);

  app.notFound((c) => c.json({ resource: 'route', error: `no route matches ${c.req.method} ${c.req.path}` }, 404));

  app.onError(onError);

  return app;
}

const APPS_PREFIX = '/v1/apps/';

/** `/v1/apps/<x>/<something>` (the `:app` of a sub-path), not `/v1/apps/<x>` or `/v1/apps/<x>/`. */
export function hasSubPath(path: string): boolean {
  const slash = path.indexOf('/', APPS_PREFIX.length);
  return path.startsWith(APPS_PREFIX) && slash > APPS_PREFIX.length && slash < path.length - 1;
}

/** Which routes are public or take a password, from their declarations (method + path → auth). */
function routeAuthTable(declared: DeclaredRoute[]): (method: string, path: string) => RouteAuth | undefined {
  const router = new MemoRouter(new TrieRouter<RouteAuth>());
  for (const { def, auth } of declared) {
    if (auth === 'user') continue;
    for (const m of Array.isArray(def.method) ? def.method : [def.method]) router.add(m.toUpperCase(), def.path, auth);
  }
  return (method, path) => {
    const [handlers] = router.match(method, path);
    return handlers[0]?.[0];
  };
}
