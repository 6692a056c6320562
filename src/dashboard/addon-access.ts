// How the host reaches an addon's server: the app's URL variable with its host and port replaced by
// the port the emulator publishes on 127.0.0.1 (GET …/addons/:id/server), and the command line of
// the database's own client with that URL — the same composition as `up` prints (src/cli/up/addon-access.ts).
import { maskUrl } from './dom.ts';

/** The variable holding each kind's URL (the platform's names). */
const URL_VARIABLE: Record<string, string> = {
  postgresql: 'SCALINGO_POSTGRESQL_URL',
  mysql: 'SCALINGO_MYSQL_URL',
  redis: 'SCALINGO_REDIS_URL',
  mongodb: 'SCALINGO_MONGO_URL',
};

export const addonKind = (providerId: string) => providerId.replace(/^scalingo-/, '');
export const urlVariable = (kind: string) => URL_VARIABLE[kind] ?? `SCALINGO_${kind.toUpperCase()}_URL`;

export function hostUrl(value: string, host: string, port: number): string | null {
  try {
    const u = new URL(value);
    u.hostname = host;
    u.port = String(port);
    return u.href;
  } catch {
    return null;
  }
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The client's command line for a URL, as a real shell reads it; `masked` writes the password as dots.
 * mysql takes no URL: its options are spelled out (the password in `--password=`, as the client allows).
 */
export function clientCommand(kind: string, url: string, masked = false): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const password = masked ? '••••••' : decodeURIComponent(u.password);
  const shown = masked ? maskUrl(url) : url;
  switch (kind) {
    case 'postgresql':
      return `psql ${quote(shown)}`;
    case 'redis':
      return `redis-cli -u ${quote(shown)}`;
    case 'mongodb':
      return `mongosh ${quote(shown)}`;
    case 'mysql':
      return (
        `mysql --host=${u.hostname} --port=${u.port} --user=${quote(decodeURIComponent(u.username))} ` +
        `--password=${quote(password)} ${quote(decodeURIComponent(u.pathname.slice(1)))}`
      );
    default:
      return null;
  }
}
