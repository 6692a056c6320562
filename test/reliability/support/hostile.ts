// Hostile requests, reproducible from a seed: what a fuzzer (or a confused client) sends to a JSON
// API — bodies that are not JSON, of the wrong types, huge, deeply nested, with prototype keys, NUL
// bytes and unsafe numbers; paths and query strings that try traversal, encodings and overflows.

/** mulberry32: a small, fast, seeded PRNG (same seed → same requests). */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    chance: (p: number) => next() < p,
  };
}
export type Rng = ReturnType<typeof prng>;

export interface Route {
  method: string;
  path: string;
}

export interface HostileRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** What kind of hostility this is (for the histogram). */
  kind: string;
}

const MB = 1024 * 1024;
const ONE_MB_STRING = 'x'.repeat(MB);
const DEEP_ARRAY = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
const DEEP_OBJECT = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;

// Field names the real bodies use, so hostile values reach the schemas rather than stop at the root.
const ROOTS = [
  'app',
  'variable',
  'variables',
  'collaborator',
  'alert',
  'notifier',
  'deployment',
  'drain',
  'addon',
  'containers',
  'token',
  'user',
];
const FIELDS = [
  'name',
  'value',
  'key',
  'email',
  'metric',
  'limit',
  'container_type',
  'platform_id',
  'type_data',
  'webhook_url',
  'source_url',
  'git_ref',
  'amount',
  'size',
  'command',
  'env',
  'detached',
  'has_uploads',
  'plan_id',
  'addon_provider_id',
  'url',
  'metadata',
  'duration_before_trigger',
  'remind_every',
  'send_when_below',
  'notifiers',
  'selected_event_ids',
  'active',
  'force_https',
  'sticky_session',
  'router_logs',
  'stack_id',
  'owner',
  'current_name',
  'signal',
  'width',
  'height',
  'id',
  'type',
  'emails',
  'user_ids',
];
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf'];

const STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\uffff',
  '💥'.repeat(50),
  '../../etc/passwd',
  '%00',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4shell-style probe, sent as a literal string
  '${jndi:x}',
  "'; DROP TABLE apps; --",
  '<script>alert(1)</script>',
  'web|worker',
  '(a+)+b',
  'a'.repeat(10_000),
  'null',
  'true',
  '1e309',
  '-0',
];
// biome-ignore lint/correctness/noPrecisionLoss: 2^53 + 1 on purpose, a number JSON cannot carry exactly
const NUMBERS = [0, -1, -0, 1e308, -1e308, 9007199254740993, Number.MAX_SAFE_INTEGER, 0.5, 2 ** 31, 2 ** 63, 1e-320];

/** A JSON value chosen to break assumptions (as text, since some are not expressible as JS values). */
function hostileValue(r: Rng, depth = 0): string {
  switch (r.int(depth > 2 ? 6 : 10)) {
    case 0:
      return JSON.stringify(r.pick(STRINGS));
    case 1:
      return String(r.pick(NUMBERS));
    case 2:
      return r.pick([
        '1e400',
        '-1e400',
        '123456789012345678901234567890',
        '0.0000000000000000000000000001',
        '1E+999999',
      ]);
    case 3:
      return r.pick(['true', 'false', 'null']);
    case 4:
      return r.chance(0.02) ? JSON.stringify(ONE_MB_STRING) : JSON.stringify(r.pick(STRINGS));
    case 5:
      return '[]';
    case 6:
      return `[${Array.from({ length: r.int(4) }, () => hostileValue(r, depth + 1)).join(',')}]`;
    case 7:
      return hostileObject(r, depth + 1);
    case 8:
      return r.chance(0.1) ? DEEP_OBJECT : '{}';
    default:
      return `{${JSON.stringify(r.pick(PROTO_KEYS))}:${hostileObject(r, depth + 1)}}`;
  }
}

function hostileObject(r: Rng, depth: number): string {
  const n = r.int(5);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = r.chance(0.2) ? r.pick(PROTO_KEYS) : r.chance(0.1) ? r.pick(STRINGS) : r.pick(FIELDS);
    parts.push(`${JSON.stringify(key)}:${hostileValue(r, depth)}`);
  }
  return `{${parts.join(',')}}`;
}

const overLimit = new Map<number, string>();
const overLimitBody = (limit: number) =>
  overLimit.get(limit) ?? overLimit.set(limit, `{"a":"${'y'.repeat(limit)}"}`).get(limit)!;
const nearLimit = new Map<string, string>();

/** A body and its declared type. */
function hostileBody(r: Rng, bodyLimit: number): { body: string; type: string | null; kind: string } {
  const json = 'application/json';
  switch (r.int(12)) {
    case 0:
      return {
        body: r.pick([
          '{',
          '{"app":',
          '[1,2',
          'nul',
          '{"a":1,}',
          "{'a':1}",
          '\u0000',
          '\uffff{',
          '{"a":"\\u12"}',
          '{}{}',
          ")]}'",
        ]),
        type: json,
        kind: 'invalid JSON',
      };
    case 1:
      return { body: r.chance(0.5) ? DEEP_ARRAY : DEEP_OBJECT, type: json, kind: 'depth 10,000' };
    case 2:
      return { body: `{${JSON.stringify(r.pick(ROOTS))}:${DEEP_OBJECT}}`, type: json, kind: 'depth 10,000' };
    case 3: {
      const root = r.pick(ROOTS);
      const key = `${root}:${bodyLimit}`;
      const body =
        nearLimit.get(key) ??
        nearLimit
          .set(key, `{${JSON.stringify(root)}:{"name":${JSON.stringify(ONE_MB_STRING.slice(0, bodyLimit - 100))}}}`)
          .get(key)!;
      return { body, type: json, kind: '1 MB string' };
    }
    case 4:
      return { body: overLimitBody(bodyLimit), type: json, kind: 'over the body limit' };
    case 5:
      return {
        body: `{"__proto__":{"admin":true,"polluted":1},"constructor":{"prototype":{"polluted":1}},${JSON.stringify(r.pick(ROOTS))}:{"__proto__":{"name":"x"}}}`,
        type: json,
        kind: '__proto__ keys',
      };
    case 6:
      return {
        body: `{${JSON.stringify(r.pick(ROOTS))}:{"name":"a\\u0000b","value":"\\u0000","key":"K\\u0000"}}`,
        type: json,
        kind: 'NUL bytes',
      };
    case 7:
      return {
        body: `{${JSON.stringify(r.pick(ROOTS))}:{"amount":1e400,"limit":-1e400,"width":123456789012345678901234567890,"height":1E+999999}}`,
        type: json,
        kind: 'huge numbers',
      };
    case 8:
      return {
        body: r.pick(['<xml/>', 'a=1&b=2', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--']),
        type: r.pick([
          'application/xml',
          'text/plain',
          'multipart/form-data; boundary=x',
          'application/x-www-form-urlencoded',
          null,
        ]),
        kind: 'not JSON',
      };
    case 9:
      return { body: hostileValue(r), type: r.chance(0.8) ? json : null, kind: 'wrong types' };
    default:
      return { body: `{${JSON.stringify(r.pick(ROOTS))}:${hostileObject(r, 0)}}`, type: json, kind: 'wrong types' };
  }
}

const SEGMENTS = [
  '%00',
  '..',
  '%2e%2e',
  '..%2f..%2f',
  '%ff',
  '%',
  '%zz',
  'a'.repeat(5_000),
  '💥',
  '%F0%9F%92%A5',
  '-1',
  '0',
  '99999999999999999999',
  'null',
  '__proto__',
  'constructor',
  ' ',
  '%20',
  'web-1',
  'one-off-1',
];
const QUERIES = [
  'page=99999999999999999999',
  'page=-1',
  'page=1e3',
  'page=0x10',
  'per_page=99999999999999999999',
  'per_page=-5',
  'page=1&page=2',
  'n=99999999999',
  'n=-1',
  'filter=(a%2B)%2Bb',
  `filter=${'a'.repeat(5000)}`,
  'cursor=%00',
  'since=99999999999999999999',
  'status_code=abc',
  'last=true&since=-1',
  'current_name=%00',
  'name=%ff',
  '%zz=%zz',
  'a[b][c]=1',
  `q=${'z'.repeat(20_000)}`,
  'stream=true&token=x&timestamp=1',
];

/** Fills the parameters of a route path: mostly with real names (so requests reach the handlers), sometimes hostile. */
function fillPath(r: Rng, path: string, params: Record<string, string[]>): string {
  return path.replace(/:(\w+)/g, (_, name: string) =>
    r.chance(0.75) && params[name]?.length ? encodeURIComponent(r.pick(params[name])) : r.pick(SEGMENTS),
  );
}

export function hostileRequest(
  r: Rng,
  routes: Route[],
  opts: { params: Record<string, string[]>; authorization: () => string; bodyLimit: number },
): HostileRequest {
  const route = r.pick(routes);
  const headers: Record<string, string> = { authorization: opts.authorization() };
  let path = fillPath(r, route.path, opts.params);
  let kind = 'route';
  const roll = r.int(10);
  if (roll === 0) {
    // Hostile path: an extra or replaced segment.
    path = r.chance(0.5) ? `${path}/${r.pick(SEGMENTS)}` : path.replace(/\/[^/]*$/, `/${r.pick(SEGMENTS)}`);
    kind = 'hostile path';
  } else if (roll <= 2) {
    path += `?${r.pick(QUERIES)}${r.chance(0.3) ? `&${r.pick(QUERIES)}` : ''}`;
    kind = 'hostile query';
  }
  if (route.method === 'GET' || route.method === 'HEAD') return { method: route.method, path, headers, kind };
  const b = hostileBody(r, opts.bodyLimit);
  if (b.type) headers['content-type'] = b.type;
  return { method: route.method, path, headers, body: b.body, kind: kind === 'route' ? b.kind : kind };
}
