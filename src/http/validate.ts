import { type Context } from 'hono';
import { type z } from 'zod';
import { ApiError, type FieldErrors } from './errors.ts';
import { readNodeBody } from './request-body.ts';

/**
 * Reads the JSON body of a request: malformed JSON → 400 with the parser's message.
 * An empty body reads as {} (clients send POSTs without a body, e.g. token exchange).
 */
export async function readJson(c: Context): Promise<unknown> {
  const text = await bodyText(c);
  if (text.trim() === '') return {};
  return parseJsonText(text);
}

/**
 * Deepest nesting of objects and arrays a body may have. The platform's bodies are at most a few
 * levels deep; a deeper one is refused before parsing (a 10,000-deep value would parse, then make
 * JSON.stringify, zod and SQLite recurse until the stack runs out).
 */
export const MAX_JSON_DEPTH = 32;

/** JSON.parse with the depth bound; both failures are the platform's 400 `{error}`. */
export function parseJsonText(text: string): unknown {
  const depth = jsonDepthBeyond(text, MAX_JSON_DEPTH);
  if (depth)
    throw ApiError.badRequest(
      `There was a problem in the JSON you submitted: nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  try {
    return JSON.parse(text);
  } catch (err) {
    throw ApiError.badRequest(`There was a problem in the JSON you submitted: ${(err as Error).message}`);
  }
}

/** True when `[`/`{` nest deeper than max outside strings (one linear pass, no parsing). */
function jsonDepthBeyond(text: string, max: number): boolean {
  // Fast path (native searches): with at most `max` opening brackets in all, nothing can nest deeper.
  let openings = 0;
  for (const ch of ['{', '['])
    for (let i = text.indexOf(ch); i >= 0 && openings <= max; i = text.indexOf(ch, i + 1)) openings++;
  if (openings <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) {
      if (++depth > max) return true;
    } else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return false;
}

/**
 * The body as text. Under @hono/node-server the Node request is read directly (request-body.ts): going
 * through c.req builds a full web Request (and its AbortSignal) for every call. The body size limit
 * still applies (Content-Length is checked by the middleware before this runs).
 */
function bodyText(c: Context): Promise<string> {
  const incoming = (c.env as { incoming?: import('node:http').IncomingMessage } | undefined)?.incoming;
  // A chunked body is read by hono, under bodyGuards' limit (Node joined a repeated header: any value counts).
  if (
    !incoming ||
    incoming.readableEnded ||
    incoming.readableDidRead ||
    incoming.headers['transfer-encoding'] !== undefined
  )
    return c.req.text();
  return readNodeBody(incoming);
}

/**
 * Validates a value against a zod schema; failures become the platform's 422
 * `{errors: {field: [message]}}`. When `root` is given (e.g. "app"), a missing or non-object
 * root gives `{errors: {app: ["missing field"]}}` and field names are reported without the root.
 */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, root?: string): z.infer<S> {
  if (root !== undefined) {
    const obj = value as Record<string, unknown> | null;
    if (
      typeof obj !== 'object' ||
      obj === null ||
      Array.isArray(obj) ||
      typeof obj[root] !== 'object' ||
      obj[root] === null ||
      Array.isArray(obj[root])
    ) {
      throw ApiError.invalid(root, 'missing field');
    }
  }
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw ApiError.unprocessable(zodToFieldErrors(result.error, root));
}

/** A body under `{root: {...}}` as the clients send it, or the same fields unwrapped (curl users, some Go client calls). */
export function wrappedBody(raw: unknown, root: string): Record<string, unknown> {
  if (raw && typeof raw === 'object' && !Array.isArray(raw) && root in raw) return raw as Record<string, unknown>;
  return { [root]: raw };
}

export async function jsonBody<S extends z.ZodType>(c: Context, schema: S, root?: string): Promise<z.infer<S>> {
  return parseWith(schema, await readJson(c), root);
}

export function zodToFieldErrors(error: z.ZodError, root?: string): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of error.issues) {
    let path = issue.path.map(String);
    if (root !== undefined && path[0] === root && path.length > 1) path = path.slice(1);
    const field = path.join('.') || root || 'base';
    (out[field] ??= []).push(messageOf(issue));
  }
  return out;
}

function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'missing field';
  if (issue.code === 'invalid_type') return `must be ${article(issue.expected)}`;
  return issue.message;
}

function article(t: string): string {
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}

/**
 * The page a paginated list asks for, from its parsed `pageQuery` (api-schemas.ts): `page`/`per_page` as whole
 * numbers, per_page clamped to the resource's maximum; anything else is the platform's 422 naming the field.
 */
export function pageParams(
  query: { page?: string; per_page?: string },
  defaults: { defaultPerPage: number; maxPerPage: number },
): { page: number; perPage: number } {
  const page = intParam(query.page, 'page', 1);
  const perPage = intParam(query.per_page, 'per_page', defaults.defaultPerPage);
  return { page, perPage: Math.min(perPage, defaults.maxPerPage) };
}

/**
 * The `n` query parameter (how many lines of logs): undefined when absent or empty, else a whole number of at
 * most nine digits, capped at `max`; anything else is a 400. The one parser of every route that takes `n`.
 */
export function lineCount(raw: string | undefined, max: number): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,9}$/.test(raw)) throw ApiError.badRequest(`invalid n "${raw}": it must be a whole number of lines`);
  return Math.min(Number(raw), max);
}

/** Largest page / per_page read: (page - 1) × per_page stays a safe integer, SQLite gets an INTEGER. */
const MAX_PAGE = 999_999_999;

function intParam(raw: string | undefined, name: string, fallback: number): number {
  // The Go client sends page=0&per_page=0 when unset: 0 means the default.
  if (raw === undefined || raw === '' || /^0+$/.test(raw)) return fallback;
  if (!/^\d+$/.test(raw)) throw ApiError.invalid(name, 'must be a whole number');
  const n = Number(raw);
  if (n > MAX_PAGE) throw ApiError.invalid(name, `must be a whole number from 1 to ${MAX_PAGE}`);
  return n;
}
