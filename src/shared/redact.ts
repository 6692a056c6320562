// URLs as they may appear in the emulator's own log: credentials a user put in a webhook URL
// (user:password@, ?token=…) are variable values and never reach the log.

/** Query parameters whose value is treated as a secret (matched case-insensitively, in part). */
const SECRET_PARAM = /token|secret|key|pass|pwd|auth|sig|session|credential|code/i;

/** The URL with its userinfo and secret-looking query values replaced by `***`; unparsable → `<invalid url>`. */
export function redactUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return '<invalid url>';
  }
  if (u.username) u.username = '***';
  if (u.password) u.password = '***';
  for (const name of [...new Set(u.searchParams.keys())]) if (SECRET_PARAM.test(name)) u.searchParams.set(name, '***');
  return u.toString();
}

/**
 * Splits the userinfo off a URL (fetch refuses URLs that carry credentials) into an HTTP basic
 * Authorization value, as Go's net/http client does with `http://user:pass@host/`.
 */
export function basicAuthFromUrl(raw: string): { url: string; authorization: string | null } {
  const u = new URL(raw);
  if (!u.username && !u.password) return { url: raw, authorization: null };
  const user = decodeURIComponent(u.username);
  const pass = decodeURIComponent(u.password);
  u.username = '';
  u.password = '';
  return { url: u.toString(), authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` };
}
