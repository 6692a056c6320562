// How to reach each addon from the host: its server's port on 127.0.0.1 with the URL variable's
// credentials (psql/redis-cli/mysql work as is), or the CLI's db-tunnel when no port is published.
import { type ApiClient } from './api-client.ts';
import { type AddonJson } from './provision.ts';

export interface AddonAccess {
  kind: string;
  addonId: string;
  /** 127.0.0.1:<port> when the server's port is published on the host. */
  host: string | null;
  port: number | null;
  /** The URL the host can use (the app's variable with the host and port replaced). */
  url: string | null;
  /** One line for the terminal. */
  hint: string;
}

const URL_VARIABLE: Record<string, string> = {
  postgresql: 'SCALINGO_POSTGRESQL_URL',
  mysql: 'SCALINGO_MYSQL_URL',
  redis: 'SCALINGO_REDIS_URL',
  'tcp-gateway': 'TCP_URL',
};

export async function addonAccess(api: ApiClient, app: string, addons: AddonJson[]): Promise<AddonAccess[]> {
  if (!addons.length) return [];
  const { variables } = await api.get<{ variables: { name: string; value: string }[] }>(`/v1/apps/${app}/variables`);
  const out: AddonAccess[] = [];
  for (const a of addons) {
    const kind = a.addon_provider.id.replace(/^scalingo-/, '');
    const variable = URL_VARIABLE[kind] ?? `SCALINGO_${kind.toUpperCase()}_URL`;
    const inApp = variables.find((v) => v.name === variable)?.value ?? null;
    if (kind === 'tcp-gateway') {
      // The emulated gateway listens on the host's loopback: its TCP_URL (tcp://127.0.0.1:<port>) is reached as it is.
      out.push({ kind, addonId: a.id, host: null, port: null, url: inApp, hint: inApp ?? 'TCP_URL is not set' });
      continue;
    }
    const server = await api
      .find<{ server: { host: string | null; port: number | null } }>(`/v1/apps/${app}/addons/${a.id}/server`)
      .catch(() => undefined);
    const host = server?.server.host ?? null;
    const port = server?.server.port ?? null;
    const url = inApp && host && port ? hostUrl(inApp, host, port) : null;
    const hint = url ? `${url}` : `scalingo --app ${app} db-tunnel ${variable}`;
    out.push({ kind, addonId: a.id, host, port, url, hint });
  }
  return out;
}

function hostUrl(value: string, host: string, port: number): string | null {
  try {
    const u = new URL(value);
    u.hostname = host;
    u.port = String(port);
    return u.toString();
  } catch {
    return null;
  }
}
