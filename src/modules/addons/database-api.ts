// The database API's shared rules (SCALINGO_DB_URL, prefix /api): which addon a bearer token opens, and
// the clear 400 for a feature an addon cannot give (a stand-in runs no server; a real server's
// feature the API does not serve yet). Used by database-api.routes.ts and database-features.routes.ts.
import { type Context } from 'hono';
import { ApiError } from '../../http/errors.ts';
import { type AddonServers } from './addon-servers.ts';
import { findProvider } from './addons.catalog.ts';
import { type AddonsService } from './addons.service.ts';
import { type AddonRow } from './addons.store.ts';

/** SCALINGO_DB_URL=<api> gives /api/…; without it the clients use the region's database_api (/_emulator/databases). */
export const DATABASE_API_BASES = ['/api', '/_emulator/databases/api'] as const;

/** What each path of the database API is about, for the message (first match wins). */
const FEATURES: [RegExp, string][] = [
  [/^\/logs_archives/, 'log archives'],
  [/^\/logs/, 'logs'],
  [/^\/pitr|^\/recovery/, 'point-in-time recovery'],
  [/^\/backups|^\/periodic_backups/, 'backups'],
  [/^\/users/, 'database users'],
  [/^\/maintenance/, 'maintenance windows'],
  [/^\/features/, 'database features (force TLS, Internet access)'],
  [/^\/firewall_rules/, 'firewall rules'],
  [/^\/action|^\/databases|^\/collections|^\/tables/, 'database actions'],
];

/** The feature a path under /databases/:id is about. */
export function featureOf(path: string, id: string): string {
  const at = path.indexOf(`/databases/${id}`);
  const rest = at < 0 ? path : path.slice(at + `/databases/${id}`.length);
  return FEATURES.find(([re]) => re.test(rest))?.[1] ?? 'database server features';
}

/** The addon the bearer token is for; 401 without a valid one, 404 for another addon. */
export function tokenAddon(addons: AddonsService, c: Context, id: string | undefined): AddonRow {
  const m = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '');
  const addon = m?.[1] ? addons.addonOfToken(m[1]) : undefined;
  if (!addon)
    throw ApiError.unauthorized('a valid addon token is required: POST /v1/apps/:app/addons/:id/token gives one');
  if (id !== undefined && id !== addon.id) throw ApiError.notFound('database');
  return addon;
}

/** The 400 `{error}` for a feature the addon lacks (go-scalingo prints it as "400 Bad Request → …"). */
export function lacks(servers: AddonServers | undefined, addon: AddonRow, feature: string): ApiError {
  const provider = findProvider(addon.provider_id)?.name ?? addon.provider_id;
  // A real server runs (issue #15), but this API does not serve its features yet: say where they are.
  if (servers?.server(addon.id)) {
    return ApiError.badRequest(
      `The ${provider} addon ${addon.resource_id} runs a real server in the Scalingo emulator, but its ` +
        `database API does not serve ${feature} yet. The server's output: GET ` +
        `/v1/apps/:app/addons/${addon.id}/server/logs; a dump made now: GET ` +
        `/v1/apps/:app/addons/${addon.id}/server/dump; the port published on 127.0.0.1: docker port.`,
    );
  }
  return ApiError.badRequest(
    `The ${provider} addon ${addon.resource_id} is a stand-in of the Scalingo emulator: no database server ` +
      `runs, so ${feature} are not available. Stand-in addons provide the addon resource, its plan, its log ` +
      `drains and its token.`,
  );
}

// How long a request that needs the server waits for a start under way (a plan change's restart, provisioning), and
// when a client refused after it is told to come back.
const SERVER_WAIT_MS = 20_000;
const RETRY_AFTER_SECONDS = 5;

/** The 503 `{error}` of a database that does not answer yet (provisioning, restarting, stopped, failed to start). */
export function notReady(addon: AddonRow): ApiError {
  const state =
    addon.status === 'provisioning' ? 'still starting' : addon.status === 'running' ? 'not running' : `${addon.status}`;
  return ApiError.unavailable(
    `the database server of addon ${addon.resource_id} is ${state}: retry once the addon is running`,
    RETRY_AFTER_SECONDS,
  );
}

/**
 * The addon the token is for, when it runs a real server, whatever that server's state: 401/404 as tokenAddon, the
 * stand-in's 400 (`lacks`). What the database API records itself (logs URL, archives, the backups list, settings,
 * maintenance) answers from it while the server restarts, as on the platform (issue 37).
 */
export function recordedAddon(
  addons: AddonsService,
  servers: AddonServers | undefined,
  c: Context,
  id: string,
): AddonRow {
  const addon = tokenAddon(addons, c, id);
  if (!servers?.server(addon.id)) throw lacks(servers, addon, featureOf(c.req.path, id));
  return addon;
}

/**
 * The addon, once its server is ready: as recordedAddon, then a start under way is waited for up to SERVER_WAIT_MS;
 * an addon still not `running` then (or in `error`) is a 503 with Retry-After.
 */
export async function readyAddon(
  addons: AddonsService,
  servers: AddonServers | undefined,
  c: Context,
  id: string,
): Promise<AddonRow> {
  const addon = recordedAddon(addons, servers, c, id);
  if (addon.status === 'running') return addon;
  await servers?.settled(addon.id, SERVER_WAIT_MS);
  const now = tokenAddon(addons, c, id);
  if (now.status !== 'running') throw notReady(now);
  return now;
}
