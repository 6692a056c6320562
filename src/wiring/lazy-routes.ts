// A route group whose module (its routes file and the zod schemas it evaluates) is imported at the first request
// that reaches one of its routes, not at start. Route matching and authentication need every route's method, path
// and auth before that: they come from the routes manifest (routes-manifest.ts, written by `npm run routes:manifest`
// from the real groups; test/unit/lazy-routes.test.ts fails when it differs from them). At start the group mounts one
// stand-in route per manifest entry, in the manifest's order, with the same method and path as the real one; each
// runs the real route's steps once the group is built. docs/architecture.md, "Start and idle memory".
import { type Context } from 'hono';
import { ApiRoutes, type DeclaredRoute, type RouteAuth } from '../http/api-routes.ts';
import { type AppEnv } from '../http/env.ts';
import { type ManifestRoute, ROUTES_MANIFEST } from './routes-manifest.ts';

/**
 * Only groups whose routes the HTTP app authenticates itself (before any route runs) may be lazy: a request
 * without valid credentials never builds an area. Routes that check their own credentials (admin token, signed
 * URL, addon token) stay in groups built at start.
 */
const LAZY_AUTH: ReadonlySet<RouteAuth> = new Set(['public', 'user', 'password']);

export class LazyRoutes extends ApiRoutes {
  private group: ApiRoutes | undefined;
  private building: Promise<ApiRoutes> | undefined;
  private readonly expected: readonly ManifestRoute[];

  /**
   * @param key the group's name in the manifest (its routes file's factory, e.g. `appsRoutes`)
   * @param load imports the routes file and builds its group (`() => import('…routes.ts').then((m) => m.x(deps))`)
   */
  constructor(
    readonly key: string,
    private readonly load: () => Promise<ApiRoutes>,
    manifest: Readonly<Record<string, readonly ManifestRoute[]>> = ROUTES_MANIFEST,
  ) {
    super(manifest[key]?.[0]?.[3] ?? key);
    // A group missing from the manifest mounts nothing; its first build (npm run routes:manifest) reports it.
    this.expected = manifest[key] ?? [];
    this.expected.forEach(([methods, path, auth, area], index) => {
      if (!LAZY_AUTH.has(auth))
        throw new Error(`lazy route group "${key}": ${path} checks its own credentials (${auth})`);
      const built = () => this.build();
      const def = { method: [...methods], path, summary: '', responses: {} };
      this.declared.push({ def, auth, area, built } as DeclaredRoute);
      this.on(
        methods.map((m) => m.toUpperCase()),
        [path],
        (c, next) => this.dispatch(index, c, next) as Response | Promise<Response>,
      );
    });
  }

  /** The real group, built once: concurrent first requests wait on the same build; a failed build is tried again. */
  build(): Promise<ApiRoutes> {
    this.building ??= this.load()
      .then((group) => {
        this.adopt(group);
        this.group = group;
        return group;
      })
      .catch((err: unknown) => {
        this.building = undefined;
        throw err;
      });
    return this.building;
  }

  /** What the group's routes file declares now, from a group built apart (the manifest's writer and its test). */
  async actualRoutes(): Promise<ManifestRoute[]> {
    return (await this.load()).declared.map(manifestEntry);
  }

  private dispatch(index: number, c: Context<AppEnv>, next: () => Promise<void>): unknown {
    const group = this.group;
    if (group) return group.runRoute(index, c, next);
    return this.build().then((g) => g.runRoute(index, c, next));
  }

  /** The built group must declare what the manifest said, in its order; its declarations replace the stand-ins'. */
  private adopt(group: ApiRoutes): void {
    const real = group.declared.map(manifestEntry);
    if (JSON.stringify(real) !== JSON.stringify(this.expected))
      throw new Error(
        `route group "${this.key}" differs from src/wiring/routes-manifest.ts: run npm run routes:manifest`,
      );
    group.declared.forEach((d, i) => {
      const standIn = this.declared[i];
      standIn.def = d.def;
      standIn.auth = d.auth;
      standIn.area = d.area;
      delete standIn.built;
    });
  }
}

/** A declared route as the manifest writes it: methods, path, auth, area. */
export function manifestEntry({ def, auth, area }: DeclaredRoute): ManifestRoute {
  return [[def.method].flat(), def.path, auth, area];
}

/** `lazyRoutes('appsRoutes', () => import('…/apps.routes.ts').then((m) => m.appsRoutes(deps)))` in an area's units. */
export function lazyRoutes(key: string, load: () => Promise<ApiRoutes>): LazyRoutes {
  return new LazyRoutes(key, load);
}
