// The dashboard's credentials. The start banner's link carries the admin token (?token=…); it is
// moved to sessionStorage at once (and out of the address bar), and traded at
// POST /_emulator/dashboard/session for a bearer of a configured user. Every call then goes to the
// platform's own /v1 API with that bearer, as any client would.
const ADMIN_KEY = 'scalingo-emulator.admin-token';
const USER_KEY = 'scalingo-emulator.user';

export interface SessionUser {
  username: string;
  email: string;
}

export class ApiFailure extends Error {
  constructor(
    public status: number,
    public body: unknown,
  ) {
    super(describe(status, body));
  }
}

function describe(status: number, body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as { error?: string; errors?: Record<string, string[]> };
    if (b.error) return `${status}: ${b.error}`;
    if (b.errors)
      return `${status}: ${Object.entries(b.errors)
        .map(([k, v]) => `${k} ${v.join(', ')}`)
        .join('; ')}`;
  }
  return `${status}: ${typeof body === 'string' ? body : 'request failed'}`;
}

let bearer: string | null = null;
let users: SessionUser[] = [];
let current: SessionUser | null = null;

/** Takes ?token= out of the URL into sessionStorage; returns the admin token known to this tab. */
export function adminToken(): string | null {
  const url = new URL(location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    sessionStorage.setItem(ADMIN_KEY, fromUrl);
    url.searchParams.delete('token');
    history.replaceState(null, '', `${url.pathname}${url.search}${url.hash}`);
  }
  return sessionStorage.getItem(ADMIN_KEY);
}

export function setAdminToken(token: string): void {
  sessionStorage.setItem(ADMIN_KEY, token.trim());
}

export function forgetAdminToken(): void {
  sessionStorage.removeItem(ADMIN_KEY);
  bearer = null;
}

export const sessionUsers = () => users;
export const sessionUser = () => current;

/** A new bearer for the chosen user (default: the last one picked in this tab, else the first configured). */
export async function openSession(user?: string): Promise<SessionUser> {
  const token = adminToken();
  if (!token) throw new ApiFailure(401, { error: 'no admin token' });
  const wanted = user ?? sessionStorage.getItem(USER_KEY) ?? undefined;
  const res = await fetch('/_emulator/dashboard/session', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(wanted ? { user: wanted } : {}),
  });
  const body = await res.json().catch(() => null);
  if (res.status === 422 && wanted && !user) {
    sessionStorage.removeItem(USER_KEY);
    return openSession();
  }
  if (!res.ok) throw new ApiFailure(res.status, body);
  const s = body as { session: { bearer: string; user: SessionUser }; users: SessionUser[] };
  bearer = s.session.bearer;
  users = s.users;
  current = s.session.user;
  sessionStorage.setItem(USER_KEY, current.username);
  return current;
}

export interface Answer<T> {
  status: number;
  body: T;
  headers: Headers;
}

/** A call to the platform API with the session's bearer; an expired bearer is renewed once. */
export async function api<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  retried = false,
): Promise<Answer<T>> {
  if (!bearer) await openSession();
  const res = await fetch(path, {
    method,
    headers: {
      authorization: `Bearer ${bearer}`,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 401 && !retried) {
    bearer = null;
    return api(method, path, body, true);
  }
  return answer<T>(res);
}

/** The session's bearer, for what authenticates in a message rather than a header (the deployments stream). */
export async function sessionBearer(): Promise<string> {
  if (!bearer) await openSession();
  return bearer ?? '';
}

/** A call to the database API with an addon's own token (POST /v1/apps/:app/addons/:id/token), as the CLI makes it. */
export async function databaseApi<T = unknown>(token: string, method: string, path: string): Promise<Answer<T>> {
  return answer<T>(
    await fetch(`/api${path}`, { method, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } }),
  );
}

async function answer<T>(res: Response): Promise<Answer<T>> {
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json')) parsed = text ? JSON.parse(text) : null;
  if (!res.ok) throw new ApiFailure(res.status, parsed);
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** A ws:// URL of the same origin for an http(s):// URL the API gave (attach URL, deployments stream). */
export function socketUrl(url: string): string {
  const u = new URL(url, location.href);
  u.protocol = u.protocol === 'https:' || u.protocol === 'wss:' ? 'wss:' : 'ws:';
  return u.href;
}

/** A control-plane read (the admin token itself). */
export async function control<T = unknown>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { authorization: `Bearer ${adminToken()}`, accept: 'application/json' } });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new ApiFailure(res.status, body);
  return body as T;
}

/** The WebSocket URL of a signed logs URL (same origin: ws:// on the API port). */
export function logsSocketUrl(logsUrl: string): string {
  const u = new URL(socketUrl(logsUrl));
  u.searchParams.set('stream', 'true');
  return u.href;
}
