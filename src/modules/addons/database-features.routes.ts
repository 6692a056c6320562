// The database API's features for REAL addon servers (issue #15), as go-scalingo calls them:
// backups (backups.go: list, create, show, archive URL), users (databases.go DatabaseListUsers) and
// the addon's logs URL (addons.go AddonLogsURL). Mounted before database-api.routes.ts: for a
// stand-in addon every handler passes on (`next()`), which answers the stand-in's clear 400.
// The signed download and logs URLs are served here too, outside /v1 (their query is the credential).
import { Hono, type Context, type Next } from 'hono';
import { z } from 'zod';
import { limitBody } from '../../http/middleware/json-only.ts';
import { jsonBody, pathParam } from '../../http/validate.ts';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { formattedLine } from '../logs/log-line.ts';
import type { UrlSigner } from '../logs/logs-url.ts';
import type { AddonsService } from './addons.service.ts';
import type { AddonRow } from './addons.store.ts';
import type { AddonServers } from './addon-servers.ts';
import type { AddonBackups } from './addon-backups.ts';

const LOGS = 'addon-logs';
const LOGS_URL_TTL_MS = 10 * 60_000;
const MAX_LINES = 1000;
/** Users the platform manages itself: the CLI shows them as protected (not deletable). */
const SYSTEM_USERS = new Set(['postgres', 'root', 'mysql', 'mariadb.sys', 'default']);

// The CLI's own rules (cli db/users/utils.go: 6–32 characters, password 24–64); the character sets are
// narrower so that no value needs quoting in the servers' SQL.
const createUserSchema = z.object({
  database_user: z
    .object({
      name: z.string().regex(/^[a-z][a-z0-9_]{5,31}$/, 'must be 6 to 32 lowercase letters, digits or _, starting with a letter'),
      read_only: z.boolean().optional(),
      password: z.string().regex(/^[A-Za-z0-9_.~+=!@#%^*,:-]{24,64}$/, 'must be 24 to 64 letters, digits or _.~+=!@#%^*,:-').optional().or(z.literal('')),
      password_confirmation: z.string().max(64).optional(),
    })
    .refine((u) => !u.password || u.password === u.password_confirmation, { message: "doesn't match the password", path: ['password_confirmation'] }),
});

export interface DatabaseFeaturesDeps {
  addons: AddonsService;
  servers: AddonServers;
  backups: AddonBackups;
  signer: UrlSigner;
  apiUrl: () => string;
}

/** The addon a signed addon-logs URL opens (401 when invalid, expired or the addon runs no server). */
export function checkAddonLogsUrl(signer: UrlSigner, servers: AddonServers, id: string, q: { token?: string; timestamp?: string }): string {
  const check = signer.check(LOGS, q.token, q.timestamp, LOGS_URL_TTL_MS);
  if (!check.ok) throw ApiError.unauthorized(check.reason === 'expired' ? 'this logs URL has expired: ask the database API for a new one' : 'invalid logs token');
  if (check.subject !== id || !servers.server(id)) throw ApiError.unauthorized('invalid logs token');
  return id;
}

export function databaseFeaturesRoutes(deps: DatabaseFeaturesDeps) {
  const { servers, backups } = deps;
  const r = new Hono<AppEnv>();

  /** The real addon the token is for (401 without a valid token, 404 for another addon); null for a stand-in. */
  function realAddon(c: Context<AppEnv>, id: string | undefined): AddonRow | null {
    const m = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '');
    const addon = m ? deps.addons.addonOfToken(m[1]) : undefined;
    if (!addon) throw ApiError.unauthorized('a valid addon token is required: POST /v1/apps/:app/addons/:id/token gives one');
    if (id !== undefined && id !== addon.id) throw ApiError.notFound('database');
    return servers.server(addon.id) ? addon : null;
  }
  const real = (handler: (c: Context<AppEnv>, addon: AddonRow) => Response | Promise<Response>) => async (c: Context<AppEnv>, next: Next) => {
    const addon = realAddon(c, c.req.param('id'));
    if (!addon) return next();
    return handler(c, addon);
  };

  for (const base of ['/api', '/_emulator/databases/api']) {
    r.get(`${base}/databases/:id/backups`, real((c, addon) => c.json({ database_backups: backups.list(addon) })));
    r.post(`${base}/databases/:id/backups`, real((c, addon) => c.json({ database_backup: backups.json(backups.create(addon)) }, 201)));
    r.get(`${base}/databases/:id/backups/:backup/archive`, real((c, addon) => c.json({ download_url: backups.downloadUrl(addon, pathParam(c, 'backup')) })));
    // BackupShow: go-scalingo asks /backups/:id at the API's root, not under the database.
    r.get(`${base}/backups/:backup`, real((c, addon) => c.json({ database_backup: backups.json(backups.show(addon, pathParam(c, 'backup'))) })));

    r.get(
      `${base}/databases/:id/users`,
      real(async (c, addon) => {
        const users = await servers.users(addon.id);
        if (!users) throw ApiError.unavailable('the database server is not running: retry once the addon is running');
        const own = servers.server(addon.id)?.username;
        return c.json({
          'database-users': users.map((u) => ({
            name: u.name,
            read_only: u.readOnly,
            protected: u.name === own || SYSTEM_USERS.has(u.name),
            ...(u.passwordEncryption ? { dbms_attributes: { password_encryption: u.passwordEncryption } } : {}),
          })),
        });
      }),
    );

    // DatabaseCreateUser / DatabaseDeleteUser (PostgreSQL, MySQL; Redis has no user management in the CLI).
    r.post(
      `${base}/databases/:id/users`,
      limitBody(16 * 1024),
      real(async (c, addon) => {
        const { database_user: u } = await jsonBody(c, createUserSchema, 'database_user');
        if ((await servers.users(addon.id))?.some((x) => x.name === u.name)) throw ApiError.invalid('name', `user "${u.name}" already exists`);
        const password = u.password || randomBytes(24).toString('base64url');
        const done = await servers.manageUser(addon.id, 'createUser', { name: u.name, password, readOnly: u.read_only }).catch((err: Error) => {
          throw ApiError.badRequest(`the server refused to create the user: ${err.message}`);
        });
        if (!done) throw ApiError.badRequest('this database has no user management');
        return c.json({ database_user: { name: u.name, read_only: !!u.read_only, protected: false, password } }, 201);
      }),
    );
    r.delete(
      `${base}/databases/:id/users/:name`,
      real(async (c, addon) => {
        const name = pathParam(c, 'name');
        const users = await servers.users(addon.id);
        if (!users?.some((x) => x.name === name)) throw ApiError.notFound('user');
        if (name === servers.server(addon.id)?.username || SYSTEM_USERS.has(name)) throw ApiError.badRequest(`user "${name}" is protected: it cannot be deleted`);
        const done = await servers.manageUser(addon.id, 'deleteUser', { name }).catch((err: Error) => {
          throw ApiError.badRequest(`the server refused to delete the user: ${err.message}`);
        });
        if (!done) throw ApiError.badRequest('this database has no user management');
        return c.body(null, 204);
      }),
    );

    // AddonLogsURL: a signed URL of the server's recent output, read like an app's logs URL.
    r.get(`${base}/databases/:id/logs`, real((c, addon) => c.json({ url: `${deps.apiUrl()}/_emulator/addon-logs/${addon.id}?${deps.signer.query(LOGS, addon.id)}` })));
  }

  r.get('/_emulator/addon-backups/:backup/archive', (c) => {
    const file = backups.archiveFile(c.req.param('backup'), c.req.query());
    const body = Readable.toWeb(createReadStream(file.path)) as ReadableStream;
    return c.body(body, 200, { 'content-type': 'application/gzip', 'content-length': String(file.size), 'content-disposition': `attachment; filename="${file.name}"` });
  });

  r.get('/_emulator/addon-logs/:id', (c) => {
    const id = checkAddonLogsUrl(deps.signer, servers, c.req.param('id'), c.req.query());
    if (c.req.query('stream') === 'true') throw ApiError.badRequest('follow the logs of an addon with a WebSocket (Upgrade: websocket), as `scalingo logs --addon -f` does');
    const raw = c.req.query('n');
    const n = raw && /^\d{1,9}$/.test(raw) ? Math.min(MAX_LINES, Number(raw)) : 100;
    const lines = servers.logs.recent(id, n);
    // The Go CLI prints "There is no log" on 204, like for an app.
    if (!lines.length) return c.body(null, 204);
    return c.body(lines.map((l) => `${formattedLine(l)}\n`).join(''), 200, { 'content-type': 'text/plain; charset=utf-8' });
  });
  return r;
}
