// Turns an app row (settings stored as 0/1) and the app's running web containers into what the
// router needs for one request. Read at every request, so a settings change applies at once.
import { type RouteTarget, type UpstreamSource } from './types.ts';

/** The columns of an app row the router reads (structural, so the router does not depend on the apps store). */
export interface RoutableApp {
  id: string;
  name: string;
  force_https: number;
  sticky_session: number;
  router_logs: number;
}

export function appRouteResolver(deps: {
  findApp(idOrName: string): RoutableApp | null | undefined;
  upstreams: UpstreamSource;
  /** The app's canonical custom domain, if any. */
  canonicalOf?(appId: string): string | null;
}): (appName: string) => RouteTarget | null {
  return (appName) => {
    const app = deps.findApp(appName);
    // find() also matches ids; a host names an app by its name only.
    if (!app || app.name !== appName) return null;
    return {
      canonicalHost: deps.canonicalOf?.(app.id) ?? null,
      appId: app.id,
      appName: app.name,
      forceHttps: Boolean(app.force_https),
      stickySession: Boolean(app.sticky_session),
      routerLogs: Boolean(app.router_logs),
      upstreams: deps.upstreams(app.id),
    };
  };
}

/** Custom domains: the app a hostname is linked to (exact or wildcard), routed like its default host. */
export function domainRouteResolver(deps: {
  route(hostname: string): { appId: string; canonical: string | null } | null;
  findApp(idOrName: string): RoutableApp | null | undefined;
  byName: (appName: string) => RouteTarget | null;
}): (hostname: string) => RouteTarget | null {
  return (hostname) => {
    const r = deps.route(hostname);
    const app = r ? deps.findApp(r.appId) : null;
    return app ? deps.byName(app.name) : null;
  };
}
