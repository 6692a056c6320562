import { type Result } from 'hono/router';

/** At most this many segment positions are learned per method (the API's paths have a handful of `:param` depths). */
const MAX_POSITIONS = 8;

/** A remembered match of one path, reusable for every path that differs from it only in one segment. */
interface Shape<T> {
  result: Result<T>;
  /** For each matched handler (same order as `result[0]`): the names of its parameters taken from that segment. */
  keys: string[][];
}

/**
 * Remembered matches keyed by a path's shape: the path with one segment left out. A DELETE of an app names a new
 * app each time (`/v1/apps/<new name>`), so remembering whole paths misses every time; what hono's TrieRouter does
 * with that path, though, does not depend on the segment's text when that text is no segment of any route (no literal
 * child to follow) and every route's segments are plain (literal, `:name`, or `*`: no regular expression, optional
 * parameter or partial wildcard, whose match reads the text). Such a path matches the same handlers as the one
 * remembered, with that segment's text as the value of the same parameters.
 */
export class PathShapes<T> {
  /** Every segment of every route added, at any depth (a `*` in the middle of a route compares later segments too). */
  readonly #routeSegments = new Set<string>();
  /** False once a route has a segment whose match depends on the text (then no shape is ever used). */
  #plain = true;
  /** Per method: the segment positions learned, then per position the shapes (path with that segment empty). */
  readonly #positions = new Map<string, number[]>();
  readonly #shapes = new Map<string, Map<number, Map<string, Shape<T>>>>();

  /** Takes note of a route's segments; the shapes learned so far are forgotten by the caller (`clear`). */
  addRoute(path: string): void {
    for (const segment of path.split('/')) {
      this.#routeSegments.add(segment);
      if (/[{}?]/.test(segment) || (segment.includes('*') && segment !== '*')) this.#plain = false;
    }
  }

  clear(): void {
    this.#positions.clear();
    this.#shapes.clear();
  }

  /** The match of `path` from a remembered one of the same shape, or undefined. */
  match(method: string, path: string): Result<T> | undefined {
    const positions = this.#positions.get(method);
    if (!positions) return undefined;
    for (const position of positions) {
      const bounds = segmentBounds(path, position);
      if (!bounds) continue;
      const [start, end] = bounds;
      const segment = path.slice(start, end);
      if (!this.#free(segment)) continue;
      const shape = this.#shapes
        .get(method)
        ?.get(position)
        ?.get(path.slice(0, start) + path.slice(end));
      if (shape) return withSegment(shape, segment);
    }
    return undefined;
  }

  /**
   * Remembers `result` (the match of `path`) under the path's shape, for its last segment that is free text (no
   * route's segment) found once in the path: a parameter's value, or text no route matched (the same answer, a 404
   * or a route table's miss, for any such text). Returns false when no segment is.
   */
  learn(method: string, path: string, result: Result<T>): boolean {
    if (!this.#plain || result.length !== 1) return false;
    const segments = path.split('/');
    for (let position = segments.length - 1; position > 0; position--) {
      const segment = segments[position];
      if (!this.#free(segment) || segments.indexOf(segment) !== position || segments.lastIndexOf(segment) !== position)
        continue;
      const keys = result[0].map(([, params]) => keysWithValue(params as Record<string, string>, segment));
      const start = segments.slice(0, position).join('/').length + 1;
      this.#remember(method, position, path.slice(0, start) + path.slice(start + segment.length), { result, keys });
      return true;
    }
    return false;
  }

  #free(segment: string): boolean {
    return segment !== '' && !this.#routeSegments.has(segment);
  }

  #remember(method: string, position: number, key: string, shape: Shape<T>): void {
    let positions = this.#positions.get(method);
    if (!positions) this.#positions.set(method, (positions = []));
    if (!positions.includes(position)) {
      if (positions.length >= MAX_POSITIONS) return;
      positions.push(position);
    }
    let ofMethod = this.#shapes.get(method);
    if (!ofMethod) this.#shapes.set(method, (ofMethod = new Map()));
    let ofPosition = ofMethod.get(position);
    if (!ofPosition) ofMethod.set(position, (ofPosition = new Map()));
    ofPosition.set(key, shape);
  }
}

/** Where the `position`th segment of `path` (split on `/`, the leading empty one is 0) starts and ends. */
function segmentBounds(path: string, position: number): [number, number] | undefined {
  let start = 0;
  for (let i = 0; i < position; i++) {
    const slash = path.indexOf('/', start);
    if (slash < 0) return undefined;
    start = slash + 1;
  }
  const slash = path.indexOf('/', start);
  return [start, slash < 0 ? path.length : slash];
}

function keysWithValue(params: Record<string, string>, value: string): string[] {
  const keys: string[] = [];
  for (const key in params) if (params[key] === value) keys.push(key);
  return keys;
}

/** The remembered match with the segment's text as the value of its parameters (new objects: the shape is shared). */
function withSegment<T>(shape: Shape<T>, segment: string): Result<T> {
  const matched = shape.result[0].map(([handler, params], i): [T, Record<string, string>] => {
    const keys = shape.keys[i];
    if (keys.length === 0) return [handler, params as Record<string, string>];
    const copy: Record<string, string> = Object.getPrototypeOf(params) === null ? Object.create(null) : {};
    Object.assign(copy, params);
    for (const key of keys) copy[key] = segment;
    return [handler, copy];
  });
  return [matched] as Result<T>;
}
