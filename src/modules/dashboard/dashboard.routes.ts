// The dashboard at /_emulator/ (the region's `dashboard` URL). The page and its script carry no
// data and are served to loopback clients only; everything they show comes from authenticated
// routes: the page trades the admin token (from the start banner's link, kept in sessionStorage)
// for a user's bearer at POST /_emulator/dashboard/session, then calls the ordinary /v1 API with it.
import { Hono, type Context } from 'hono';
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { readJson, parseWith } from '../../http/validate.ts';
import { limitBody } from '../../http/middleware/json-only.ts';
import type { AuthService } from '../auth/auth.service.ts';
import type { AppsService } from '../apps/apps.service.ts';
import { isLoopback, requireAdmin } from '../control/admin-auth.ts';
import { dashboardAssets } from './dashboard.assets.ts';

export interface DashboardRoutesDeps {
  auth: AuthService;
  apps: AppsService;
  /** Configured users, the first one being the default of a session. */
  usernames: () => string[];
  adminToken: () => string;
  /** Is this alert firing now (the alert engine's state)? */
  alertActive: (alertId: string) => boolean;
  bearerTtlSeconds: number;
}

const sessionSchema = z.object({ user: z.string().min(1).max(255).optional() }).strict();

const TYPES = { 'index.html': 'text/html; charset=utf-8', 'app.js': 'text/javascript; charset=utf-8', 'style.css': 'text/css; charset=utf-8' } as const;
// Everything from this origin, nothing inline, nothing from elsewhere (works offline by construction).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function dashboardRoutes(deps: DashboardRoutesDeps) {
  const r = new Hono<AppEnv>();
  const admin = requireAdmin({ token: deps.adminToken });

  const loopbackOnly = (c: { env: unknown }) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (incoming && !isLoopback(incoming.socket.remoteAddress)) throw ApiError.forbidden('the dashboard answers loopback clients only');
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

  r.get('/_emulator', (c) => c.redirect(`/_emulator/${new URL(c.req.url).search}`, 302));
  r.get('/_emulator/', serve('index.html'));
  r.get('/_emulator/app.js', serve('app.js'));
  r.get('/_emulator/style.css', serve('style.css'));

  // Admin token → a bearer of the chosen user (default: the first configured one).
  r.post('/_emulator/dashboard/session', admin, limitBody(4096), async (c) => {
    const body = parseWith(sessionSchema, await readJson(c));
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
  });

  // Whether each alert of an app is firing: the engine's state, which the platform's API does not show.
  r.get('/_emulator/dashboard/apps/:app/alert-states', admin, (c) => {
    const app = deps.apps.find(c.req.param('app'));
    if (!app) throw ApiError.notFound('app');
    const ids = (c.req.query('ids') ?? '').split(',').filter((s) => /^[\w-]{1,64}$/.test(s)).slice(0, 100);
    return c.json({ alert_states: Object.fromEntries(ids.map((id) => [id, deps.alertActive(id)])) });
  });

  return r;
}
