import { type Result, type Router } from 'hono/router';
import { PathShapes } from './path-shapes.ts';

/** At most this many (method, path) results are kept; the table is emptied when full. */
const MAX_ENTRIES = 1_000;
/** Longer paths are matched every time, never kept (the table's memory stays bounded whatever clients send). */
const MAX_PATH_LENGTH = 256;

/**
 * A router that remembers its answers. Hono's match result depends on the method and the path alone and is
 * only read by hono (the handlers to run and their path parameters), so the same request path — the same app's
 * page, asked again and again — is matched once, not walked through the tree of the emulator's ~300 routes and
 * middlewares each time. A path first seen is matched from a remembered one of the same shape when it differs from
 * it in one free-text segment only (path-shapes.ts: a new app's DELETE). Routes added later (the OpenAPI document's)
 * empty the tables.
 */
export class MemoRouter<T> implements Router<T> {
  readonly name: string;
  readonly #inner: Router<T>;
  // Per method, then per path: the path string is the key as it is (a `${method} ${path}` key was a new string to
  // join and hash on each request).
  readonly #results = new Map<string, Map<string, Result<T>>>();
  #size = 0;
  readonly #shapes = new PathShapes<T>();

  readonly #plan: (result: Result<T>) => Result<T>;

  /** `plan` turns a match into what hono runs (sync-chain.ts), once per remembered path. */
  constructor(inner: Router<T>, plan: (result: Result<T>) => Result<T> = (r) => r) {
    this.#inner = inner;
    this.#plan = plan;
    this.name = `MemoRouter(${inner.name})`;
  }

  add(method: string, path: string, handler: T): void {
    this.#forget();
    this.#shapes.addRoute(path);
    this.#inner.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    if (path.length > MAX_PATH_LENGTH) return this.#plan(this.#inner.match(method, path));
    const known = this.#results.get(method)?.get(path);
    if (known) return known;
    // A path of a known shape is not kept: each DELETE of a new app would take a place in the table.
    const shaped = this.#shapes.match(method, path);
    if (shaped) return shaped;
    const result = this.#plan(this.#inner.match(method, path));
    if (this.#size >= MAX_ENTRIES) this.#forget();
    this.#shapes.learn(method, path, result);
    let ofMethod = this.#results.get(method);
    if (!ofMethod) this.#results.set(method, (ofMethod = new Map()));
    ofMethod.set(path, result);
    this.#size++;
    return result;
  }

  #forget(): void {
    this.#results.clear();
    this.#shapes.clear();
    this.#size = 0;
  }
}
