import '@hono/zod-openapi'; // before any schema is made (see api-schemas.ts)
import { type OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import { type Context, type Handler, Hono, type MiddlewareHandler } from 'hono';
import { type ParamKeys } from 'hono/types';
import { z } from 'zod';
import { type SchemaLike, schemaOf } from './api-schemas.ts';
import { type AppEnv } from './env.ts';
import { ApiError } from './errors.ts';
import { jsonBody } from './validate.ts';

/**
 * Every HTTP route of the emulator is declared once, here-shaped: method, path, who may call it, its
 * inputs (path parameters, query, body) and its answers. The same declaration
 * - mounts the handler, which receives its path parameters, query and body parsed (`(c, { params, query, body })`:
 *   the body by the platform's rules, 400/422 shapes; a handler never reads `c.req.param()`/`c.req.query()`, a Grit
 *   rule, lint/no-raw-request-input.grit, says so),
 * - documents it in the OpenAPI 3.1 document served at /_emulator/openapi.json,
 * - tells the authentication middleware which routes are public,
 * - loads the `:app` of the path (visible to the caller, else 404) before the handler runs,
 * - and, with `validateResponses` on (the test suite), checks each answer against its declared schema.
 */

/** Who may call a route. `user` (the default on /v1): an API token or a bearer. */
export type RouteAuth =
  /** No credentials (e.g. the event catalogues the npm client fetches without a token). */
  | 'public'
  | 'user'
  /** A user's API token/bearer, or their username and password (the auth service's token routes). */
  | 'password'
  /** A signed, expiring URL checked by the route itself (logs, archives, attach). */
  | 'signed'
  /** The control plane's admin token from a loopback peer. */
  | 'admin'
  /** An addon's token as a bearer (the database API, checked by its routes). */
  | 'addon';

/**
 * A response: a JSON schema (or one made at its first use: `lazySchema`, api-schemas.ts), `null` for an empty body,
 * or other content type(s) (e.g. text or SSE on one route).
 */
export type ResponseSpec =
  | SchemaLike
  | null
  | { description?: string; contentType: string | string[]; schema?: SchemaLike };
export type Responses = Record<number, ResponseSpec>;

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteDef<
  P extends string = string,
  B extends SchemaLike | undefined = SchemaLike | undefined,
  Q extends SchemaLike<z.ZodObject> | undefined = SchemaLike<z.ZodObject> | undefined,
  R extends SchemaLike<z.ZodObject> | undefined = SchemaLike<z.ZodObject> | undefined,
> {
  method: Method | Method[];
  /** Hono syntax (`/v1/apps/:app/containers/:id`); the document writes `{app}`. */
  path: P;
  /** One line, with the spec's endpoint number when it has one: `#3 Get an app`. */
  summary: string;
  description?: string;
  /** Default: `user` under /v1, `public` elsewhere (control routes say `admin`). */
  auth?: RouteAuth;
  /**
   * Load the path's `:app` as the caller may see it into `c.var.app` before anything else runs
   * (another user's app is a 404 before its body is read). Default: true when the path has `:app`.
   */
  app?: boolean;
  /**
   * JSON body, parsed and validated before the handler (400 malformed, 422 `{errors}`). Here and in `query` and
   * `responses`, a schema made at its first use (`lazySchema`) is made when the route first needs it: its first
   * request, the OpenAPI document, or the check of its answer.
   */
  body?: B;
  /** The body's root key (`app`): a missing root is `{errors: {app: ["missing field"]}}`. */
  bodyRoot?: string;
  /** The handler reads the body itself (raw uploads, several accepted shapes); `body` only documents it. */
  rawBody?: boolean;
  /**
   * The path's parameters. Without a schema, each `:name` reaches the handler as the string the path holds (the
   * service then answers 404 for one that names nothing); a schema (one key per `:name`) parses them before the query
   * and body, and documents them. A value that does not fit names nothing: the platform's 404 `{resource, error}`
   * with the parameter's name as the resource.
   */
  params?: R;
  /**
   * Query parameters, validated before the body is read (a value that does not fit is a 400 `{error}` naming
   * it; parameters not declared are ignored) and handed to the handler parsed, as `query`. A
   * required one that is missing is left to the handler, which answers as the platform does (a signed URL
   * without its signature is a 403, an invitation without its token a 422).
   */
  query?: Q;
  /** Route middleware, run after the app is loaded (e.g. a tighter body limit). */
  middleware?: MiddlewareHandler<AppEnv>[];
  responses: Responses;
}

/** The schema a declaration gives, made at first use or not. */
type Made<S> = S extends z.ZodType ? S : S extends () => infer M ? M : undefined;
type BodyOf<B> = Made<B> extends z.ZodType ? z.infer<Made<B>> : undefined;
// Partial: a missing required parameter reaches the handler (see `query`).
type QueryOf<Q> = Made<Q> extends z.ZodObject ? Partial<z.infer<Made<Q>>> : undefined;
type ParamsOf<P extends string, R> =
  Made<R> extends z.ZodObject ? z.infer<Made<R>> : { [K in ParamKeys<P> & string]: string };

/** What a handler receives besides the context: its declaration's inputs, parsed. */
export interface RouteInput<P extends string, B, Q = undefined, R = undefined> {
  params: ParamsOf<P, R>;
  query: QueryOf<Q>;
  body: BodyOf<B>;
}
export type RouteHandler<P extends string, B, Q = undefined, R = undefined> = (
  c: Context<AppEnv, P>,
  input: RouteInput<P, B, Q, R>,
) => Response | Promise<Response>;

/** One step of a declared route: its app loading, a middleware, or its handler. */
type RouteStep = MiddlewareHandler<AppEnv> | Handler<AppEnv>;

/** A declared route as the rest of the program sees it (auth middleware, conformance check, document). */
export interface DeclaredRoute {
  def: RouteDef;
  auth: RouteAuth;
  area: string;
  /**
   * Set on the stand-in a lazy route group (src/wiring/lazy-routes.ts) declares at start from the routes manifest:
   * resolves once its area's routes are built and the real declaration has replaced the stand-in's fields.
   */
  built?: () => Promise<unknown>;
}

/**
 * The route group of one area: `new ApiRoutes('apps').add({...}, handler)`, mounted with `app.route('/', group)`.
 * Its `declared` list is what the HTTP app reads for authentication and the OpenAPI document.
 */
export class ApiRoutes extends Hono<AppEnv> {
  readonly declared: DeclaredRoute[] = [];
  /** Each declared route's steps (app loading, its middleware, the handler), in `declared` order. */
  private readonly steps: RouteStep[][] = [];

  constructor(readonly area: string) {
    super();
  }

  add<
    P extends string,
    B extends SchemaLike | undefined = undefined,
    Q extends SchemaLike<z.ZodObject> | undefined = undefined,
    R extends SchemaLike<z.ZodObject> | undefined = undefined,
  >(def: RouteDef<P, B, Q, R>, handler: RouteHandler<P, B, Q, R>): this {
    const auth = def.auth ?? (def.path.startsWith('/v1/') ? 'user' : 'public');
    const declared: DeclaredRoute = { def: def as RouteDef, auth, area: this.area };
    this.declared.push(declared);
    const methods = Array.isArray(def.method) ? def.method : [def.method];

    const pre: MiddlewareHandler<AppEnv>[] = [];
    if (def.app ?? /\/:app(\/|$)/.test(def.path)) pre.push(loadApp);
    const parse = def.body && !def.rawBody ? def.body : undefined;
    // The lenient copy of the query schema is made at the route's first request, not at start: most routes of a
    // run are never called, and each copy is a tree of zod schemas kept for the process's life.
    let query: z.ZodObject | undefined;
    const queryOf = (c: Context<AppEnv>) =>
      (def.query ? parseQuery(c, (query ??= schemaOf(def.query).partial())) : undefined) as QueryOf<Q>;
    const paramsOf = (c: Context<AppEnv>) =>
      (def.params ? parseParams(c, schemaOf(def.params)) : c.req.param()) as RouteInput<P, B, Q, R>['params'];
    const steps: RouteStep[] = [
      ...pre,
      ...(def.middleware ?? []),
      parse
        ? async (c) => {
            c.set('route', declared);
            const params = paramsOf(c);
            const query = queryOf(c);
            const body = (await jsonBody(c, schemaOf(parse), def.bodyRoot)) as BodyOf<B>;
            return handler(c as unknown as Context<AppEnv, P>, { params, query, body });
          }
        : // Without a body to parse, the handler is called directly (no promise of the wrapper's own).
          (c) => {
            c.set('route', declared);
            const input = { params: paramsOf(c), query: queryOf(c), body: undefined as BodyOf<B> };
            return handler(c as unknown as Context<AppEnv, P>, input);
          },
    ];
    this.steps.push(steps);
    this.on(
      methods.map((m) => m.toUpperCase()),
      [def.path],
      ...steps,
    );
    return this;
  }

  /**
   * Runs the steps of the `index`th declared route on a request another group matched (a lazy group's stand-in
   * route, same method and path), as hono runs a match: a step's answer becomes the context's unless one was set;
   * the last step's `next` is the caller's. Synchronous for as long as the steps are; errors go to the caller.
   */
  runRoute(index: number, c: Context<AppEnv>, next: () => Promise<void>): unknown {
    return new RouteRun(this.steps[index], c, next).step(0);
  }
}

/** One request's run through a route's steps: a class, so that no named function is made per request (CONTRIBUTING). */
class RouteRun {
  constructor(
    readonly steps: RouteStep[],
    readonly c: Context<AppEnv>,
    readonly next: () => Promise<void>,
  ) {}

  step(i: number): unknown {
    if (i === this.steps.length) return this.next();
    return this.steps[i](this.c, () => settle(this.c, this.step(i + 1)) as Promise<void>);
  }
}

/** What a step's `next()` gives back, as in hono's compose: the context, once a Response it returned is kept. */
function settle(c: Context<AppEnv>, res: unknown): unknown {
  if (res instanceof Promise) return res.then((r) => settle(c, r));
  if (res instanceof Response && !c.finalized) c.res = res;
  return c;
}

/** The request's query parameters (the first value of each) as the declaration's schema reads them; else a 400. */
function parseQuery(c: Context<AppEnv>, schema: z.ZodObject): unknown {
  const parsed = schema.safeParse(c.req.query());
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw ApiError.badRequest(`invalid query parameter ${issue.path.map(String).join('.') || 'query'}: ${issue.message}`);
}

/** The path's parameters as the declaration's schema reads them; else a 404 naming the first one that does not fit. */
function parseParams(c: Context<AppEnv>, schema: z.ZodObject): Record<string, unknown> {
  const parsed = schema.safeParse(c.req.param());
  if (parsed.success) return parsed.data;
  throw ApiError.notFound(parsed.error.issues[0].path.map(String).join('.') || 'path');
}

/** Sets `c.var.app` from the path's `:app` through the loader the HTTP app installed (404 if not visible). */
const loadApp: MiddlewareHandler<AppEnv> = (c, next) => {
  const principal = c.get('principal');
  const loader = c.get('appLoader');
  const key = c.req.param('app');
  // The HTTP app's guard of /v1/apps/:app/* sub-paths may have loaded it already.
  if (principal && loader && key !== undefined && !c.get('app')) c.set('app', loader(principal.user, key));
  return next();
};

/** `/v1/apps/:app/x/:id` → `/v1/apps/{app}/x/{id}`; a trailing `*` becomes `{path}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\/\*$/, '/{path}');
}

function pathParams(path: string): string[] {
  const names = [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
  if (/\/\*$/.test(path)) names.push('path');
  return names;
}

const SECURITY: Record<RouteAuth, RouteConfig['security']> = {
  public: [],
  user: [{ basicToken: [] }, { bearer: [] }],
  password: [{ basicToken: [] }, { bearer: [] }, { basicPassword: [] }],
  signed: [],
  admin: [{ admin: [] }],
  addon: [{ addonToken: [] }],
};

/**
 * Writes declared routes into an OpenAPI registry. Done when the document is first asked for, not at
 * start: building each route's OpenAPI config costs start-up time no request needs.
 */
export function registerRoutes(registry: OpenAPIHono['openAPIRegistry'], declared: DeclaredRoute[]): void {
  for (const { def, auth, area } of declared) {
    for (const method of Array.isArray(def.method) ? def.method : [def.method])
      registry.registerPath(routeConfig(def, method, auth, area));
  }
}

function routeConfig(def: RouteDef, method: Method, auth: RouteAuth, area: string): RouteConfig {
  const params = pathParams(def.path);
  const responses: RouteConfig['responses'] = {};
  for (const [status, spec] of Object.entries(def.responses)) {
    if (spec === null) responses[status] = { description: 'No body' };
    else if (isSchema(spec)) {
      responses[status] = {
        description: describeStatus(Number(status)),
        content: { 'application/json': { schema: schemaOf(spec) } },
      };
    } else {
      const schema = spec.schema ? schemaOf(spec.schema) : z.string();
      const content = Object.fromEntries([spec.contentType].flat().map((t) => [t, { schema }]));
      responses[status] = { description: spec.description ?? describeStatus(Number(status)), content };
    }
  }
  return {
    method,
    path: openApiPath(def.path),
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    tags: [area],
    security: SECURITY[auth],
    ...(auth === 'signed' ? { 'x-signed-url': true } : {}),
    request: {
      ...(def.params
        ? { params: schemaOf(def.params) }
        : params.length
          ? { params: z.object(Object.fromEntries(params.map((p) => [p, z.string()]))) }
          : {}),
      ...(def.query ? { query: schemaOf(def.query) } : {}),
      ...(def.body
        ? { body: { content: { 'application/json': { schema: schemaOf(def.body) } }, required: false } }
        : {}),
    },
    responses,
  } as RouteConfig;
}

/** A response declared by its JSON schema (or one made at first use), not by content types. */
export function isSchema(spec: ResponseSpec | undefined): spec is SchemaLike {
  return typeof spec === 'function' || spec instanceof z.ZodType;
}

function describeStatus(status: number): string {
  if (status === 201) return 'Created';
  if (status === 202) return 'Accepted';
  if (status === 204) return 'No content';
  if (status >= 300 && status < 400) return 'Redirect';
  return 'OK';
}
