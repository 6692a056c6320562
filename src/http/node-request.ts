import { type IncomingMessage } from 'node:http';
import { type Context } from 'hono';

/**
 * Reading a header through hono's `c.req.header()` on @hono/node-server copies the raw header list, checks the name
 * with a regular expression and the value for forbidden characters, each time. Node's parser has already trimmed
 * the values and refused control characters, so the hot path reads Node's own request where one is served by
 * @hono/node-server; elsewhere (app.request() in tests, other runtimes) there is none and hono's reading is used.
 */
export function nodeRequestOf(c: Context): IncomingMessage | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return incoming && Array.isArray(incoming.rawHeaders) ? incoming : undefined;
}

const AUTHORIZATION = 'authorization';

/**
 * The Authorization header when the request carries exactly one, read from Node's request; undefined otherwise
 * (none, several, or no Node request), and the caller reads it through hono. Node keeps only the first of a
 * repeated Authorization where hono joins them with ", " (which no bearer check accepts): the count keeps the two
 * readings equal whenever this answers.
 */
export function singleAuthorization(c: Context): string | undefined {
  const incoming = nodeRequestOf(c);
  if (!incoming) return undefined;
  const raw = incoming.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length !== AUTHORIZATION.length || name.toLowerCase() !== AUTHORIZATION) continue;
    if (value !== undefined) return undefined;
    value = raw[i + 1];
  }
  return value;
}

/** The X-Request-ID the client sent, as hono reads it (Node joins a repeated one with ", ", as hono does). */
export function sentRequestId(c: Context): string | undefined {
  const incoming = nodeRequestOf(c);
  if (!incoming) return c.req.header('x-request-id');
  const value = incoming.headers['x-request-id'];
  return typeof value === 'string' ? value : undefined;
}

/**
 * A request header as hono's `c.req.header(name)` reads it (a repeated header's values joined with ", ", undefined
 * when absent), scanned from Node's raw list where the request is Node's: no copy of the list, no name check per
 * read. `lowerName` is the header's name in lower case.
 */
export function requestHeader(c: Context, lowerName: string): string | undefined {
  const incoming = nodeRequestOf(c);
  if (!incoming) return c.req.header(lowerName);
  const raw = incoming.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length !== lowerName.length || name.toLowerCase() !== lowerName) continue;
    value = value === undefined ? raw[i + 1] : `${value}, ${raw[i + 1]}`;
  }
  return value;
}
