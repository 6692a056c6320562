// The dashboard at /_emulator/ (the region's `dashboard` URL). The page and its script carry no
// data and are served to loopback clients only; everything they show comes from authenticated
// routes: the page trades the admin token (from the start banner's link, kept in sessionStorage)
// for a user's bearer at POST /_emulator/dashboard/session, then calls the ordinary /v1 API with it.

import { type IncomingMessage } from 'node:http';
import { type Context } from 'hono';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { limitBody } from '../../http/middleware/json-only.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AuthService } from '../auth/auth.service.ts';
import { type AdminFailureWindow, isLoopback, requireAdmin } from '../control/admin-auth.ts';
import { dashboardAssets } from './dashboard.assets.ts';
import { alertStatesAnswer, alertStatesQuery, sessionAnswer, sessionSchema } from './dashboard.schemas.ts';

export interface DashboardRoutesDeps {
  auth: AuthService;
  apps: AppsService;
  /** Configured users, the first one being the default of a session. */
  usernames: () => string[];
  adminToken: () => string;
  /** Wrong admin tokens, counted with the control plane's. */
  adminFailures?: AdminFailureWindow;
  /** Is this alert firing now (the alert engine's state)? */
  alertActive: (alertId: string) => boolean;
  bearerTtlSeconds: number;
}

const TYPES = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
} as const;
// Everything from this origin, no inline script, nothing from elsewhere (works offline by construction).
// Inline styles are allowed: xterm.js's renderer writes the terminal's colours and cell size in <style>
// elements it makes at run time (no nonce option); scripts stay 'self' only.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; " +
  "form-action 'none'; frame-ancestors 'none'";

export function dashboardRoutes(deps: DashboardRoutesDeps) {
  const r = new ApiRoutes('dashboard');
  const admin = requireAdmin({ token: deps.adminToken, failures: deps.adminFailures });

  const loopbackOnly = (c: { env: unknown }) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (incoming && !isLoopback(incoming.socket.remoteAddress))
      throw ApiError.forbidden('the dashboard answers loopback clients only');
  };
  const serve = (name: keyof typeof TYPES) => async (c: Context<AppEnv>) => {
    loopbackOnly(c);
    const body = (await dashboardAssets())[name];
    return c.body(body, 200, {
      'content-type': TYPES[name],
      'content-security-policy': CSP,
      // The first URL carries ?token=: never sent onwards, never cached.
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
  };

  const asset = (name: keyof typeof TYPES) => ({ 200: { contentType: TYPES[name].split(';')[0], description: name } });
  r.add(
    {
      method: 'get',
      path: '/_emulator',
      summary: 'The dashboard (redirects to /_emulator/)',
      responses: { 302: null },
    },
    (c) => c.redirect(`/_emulator/${new URL(c.req.url).search}`, 302),
  );
  r.add(
    {
      method: 'get',
      path: '/_emulator/',
      summary: 'The dashboard page (loopback clients only)',
      responses: asset('index.html'),
    },
    serve('index.html'),
  );
  r.add(
    { method: 'get', path: '/_emulator/app.js', summary: "The dashboard's script", responses: asset('app.js') },
    serve('app.js'),
  );
  r.add(
    {
      method: 'get',
      path: '/_emulator/style.css',
      summary: "The dashboard's style sheet",
      responses: asset('style.css'),
    },
    serve('style.css'),
  );

  // Admin token → a bearer of the chosen user (default: the first configured one).
  r.add(
    {
      method: 'post',
      path: '/_emulator/dashboard/session',
      summary: "Trade the admin token for a user's bearer (the dashboard's session)",
      auth: 'admin',
      middleware: [admin, limitBody(4096)],
      body: sessionSchema,
      responses: { 200: sessionAnswer },
    },
    async (c, { body }) => {
      // Configured users only (never the platform's own system user), by username or e-mail.
      const usernames = deps.usernames();
      const users = usernames.map((u) => deps.auth.userByLogin(u)).filter((u) => !!u);
      const login = body.user ?? usernames[0];
      const user = users.find((u) => u.username === login || u.email === login);
      if (!user) throw ApiError.invalid('user', `is not a configured user (${usernames.join(', ')})`);
      const bearer = await deps.auth.sessionBearer(user.id);
      return c.json({
        session: { bearer, expires_in: deps.bearerTtlSeconds, user: { username: user.username, email: user.email } },
        users: users.map((u) => ({ username: u.username, email: u.email })),
      });
    },
  );

  // Whether each alert of an app is firing: the engine's state, which the platform's API does not show.
  r.add(
    {
      method: 'get',
      path: '/_emulator/dashboard/apps/:app/alert-states',
      summary: "Whether each of an app's alerts is firing",
      auth: 'admin',
      // Any app (the admin's view): looked up by the handler, not as the caller may see it.
      app: false,
      middleware: [admin],
      query: alertStatesQuery,
      responses: { 200: alertStatesAnswer },
    },
    (c, { params, query }) => {
      const app = deps.apps.find(params.app);
      if (!app) throw ApiError.notFound('app');
      const ids = (query.ids ?? '')
        .split(',')
        .filter((s) => /^[\w-]{1,64}$/.test(s))
        .slice(0, 100);
      return c.json({ alert_states: Object.fromEntries(ids.map((id) => [id, deps.alertActive(id)])) });
    },
  );

  return r;
}
