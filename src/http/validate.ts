import type { Context } from 'hono';
import { z } from 'zod';
import { ApiError, type FieldErrors } from './errors.ts';

/**
 * Reads the JSON body of a request: malformed JSON → 400 with the parser's message.
 * An empty body reads as {} (clients send POSTs without a body, e.g. token exchange).
 */
export async function readJson(c: Context): Promise<unknown> {
  const text = await bodyText(c);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw ApiError.badRequest(`There was a problem in the JSON you submitted: ${(err as Error).message}`);
  }
}

/**
 * The body as text. Under @hono/node-server the Node request stream is read directly: going
 * through c.req builds a full web Request (and its AbortSignal) for every call. The body size limit
 * still applies (Content-Length is checked by the middleware before this runs).
 */
async function bodyText(c: Context): Promise<string> {
  const incoming = (c.env as { incoming?: import('node:http').IncomingMessage } | undefined)?.incoming;
  if (!incoming || incoming.readableEnded || incoming.readableDidRead || c.req.header('transfer-encoding')) return c.req.text();
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Validates a value against a zod schema; failures become the platform's 422
 * `{errors: {field: [message]}}`. When `root` is given (e.g. "app"), a missing or non-object
 * root gives `{errors: {app: ["missing field"]}}` and field names are reported without the root.
 */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, root?: string): z.infer<S> {
  if (root !== undefined) {
    const obj = value as Record<string, unknown> | null;
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj) || typeof obj[root] !== 'object' || obj[root] === null || Array.isArray(obj[root])) {
      throw ApiError.invalid(root, 'missing field');
    }
  }
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw ApiError.unprocessable(zodToFieldErrors(result.error, root));
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
  if (issue.code === 'invalid_type' && (issue.input === undefined)) return 'missing field';
  if (issue.code === 'invalid_type') return `must be ${article(issue.expected)}`;
  return issue.message;
}

function article(t: string): string {
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}

/** Query parameters for `page`/`per_page`, clamped to the resource's maximum. */
export function pageParams(c: Context, defaults: { defaultPerPage: number; maxPerPage: number }): { page: number; perPage: number } {
  const page = intParam(c.req.query('page'), 'page', 1);
  const perPage = intParam(c.req.query('per_page'), 'per_page', defaults.defaultPerPage);
  return { page, perPage: Math.min(perPage, defaults.maxPerPage) };
}

function intParam(raw: string | undefined, name: string, fallback: number): number {
  // The Go client sends page=0&per_page=0 when unset: 0 means the default.
  if (raw === undefined || raw === '' || raw === '0') return fallback;
  if (!/^\d+$/.test(raw)) throw ApiError.invalid(name, 'must be a whole number');
  return Number(raw);
}
