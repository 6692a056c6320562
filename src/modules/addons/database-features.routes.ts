// The database API's features for REAL addon servers (issue #15), as go-scalingo calls them:
// backups (backups.go: list, create, show, archive URL), users (databases.go DatabaseListUsers) and
// the addon's logs URL (addons.go AddonLogsURL). Mounted before database-api.routes.ts; for a
// stand-in addon every handler answers the stand-in's clear 400 (database-api.ts `lacks`).
// The signed download and logs URLs are served here too, outside /v1 (their query is the credential).

import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { type Context } from 'hono';
import { z } from 'zod';
import { ApiRoutes } from '../../http/api-routes.ts';
import { lazySchema, signedUrlQuery } from '../../http/api-schemas.ts';
import { ApiError } from '../../http/errors.ts';
import { limitBody } from '../../http/middleware/json-only.ts';
import { jsonBody, lineCount } from '../../http/validate.ts';
import { formattedLine } from '../logs/log-line.ts';
import { type UrlSigner } from '../logs/logs-url.ts';
import { type AddonBackups } from './addon-backups.ts';
import { type AddonServers } from './addon-servers.ts';
import {
  createUserSchema,
  databaseBackupEnvelope,
  databaseBackupList,
  databaseUserCreated,
  databaseUserList,
  downloadUrl,
  logsUrl,
} from './addons.schemas.ts';
import { type AddonsService } from './addons.service.ts';
import { type AddonRow } from './addons.store.ts';
import { DATABASE_API_BASES, lacks, notReady, readyAddon, recordedAddon, tokenAddon } from './database-api.ts';
import { createDatabaseUsers } from './database-users.ts';

const LOGS = 'addon-logs';
const LOGS_URL_TTL_MS = 10 * 60_000;
const MAX_LINES = 1000;

export interface DatabaseFeaturesDeps {
  addons: AddonsService;
  servers: AddonServers;
  backups: AddonBackups;
  signer: UrlSigner;
  apiUrl: () => string;
}

/** The addon a signed addon-logs URL opens (401 when invalid, expired or the addon runs no server). */
export function checkAddonLogsUrl(
  signer: UrlSigner,
  servers: AddonServers,
  id: string,
  q: { token?: string; timestamp?: string },
): string {
  const check = signer.check(LOGS, q.token, q.timestamp, LOGS_URL_TTL_MS);
  if (!check.ok)
    throw ApiError.unauthorized(
      check.reason === 'expired'
        ? 'this logs URL has expired: ask the database API for a new one'
        : 'invalid logs token',
    );
  if (check.subject !== id || !servers.server(id)) throw ApiError.unauthorized('invalid logs token');
  return id;
}

export function databaseFeaturesRoutes(deps: DatabaseFeaturesDeps) {
  const { servers, backups } = deps;
  const r = new ApiRoutes('database-api');

  /** The addon the token is for, when it runs a real server (401, 404 another addon, 400 a stand-in), in any state. */
  const recorded = (c: Context, id: string): AddonRow => recordedAddon(deps.addons, servers, c, id);
  /** The same once its server is ready (a restart under way waited for; then 503 with Retry-After). */
  const ready = (c: Context, id: string): Promise<AddonRow> => readyAddon(deps.addons, servers, c, id);
  const users = createDatabaseUsers(servers);

  for (const base of DATABASE_API_BASES) {
    r.add(
      {
        method: 'get',
        path: `${base}/databases/:id/backups`,
        summary: 'List the backups of a database',
        auth: 'addon',
        responses: { 200: databaseBackupList },
      },
      (c, { params }) => c.json({ database_backups: backups.list(recorded(c, params.id)) }),
    );
    r.add(
      {
        method: 'post',
        path: `${base}/databases/:id/backups`,
        summary: 'Make a backup of a database now',
        auth: 'addon',
        responses: { 201: databaseBackupEnvelope },
      },
      async (c, { params }) => {
        const addon = await ready(c, params.id);
        if (!(await servers.running(addon.id))) throw notReady(addon);
        return c.json({ database_backup: backups.json(backups.create(addon)) }, 201);
      },
    );
    r.add(
      {
        method: 'get',
        path: `${base}/databases/:id/backups/:backup/archive`,
        summary: 'Get a signed download URL of a backup',
        auth: 'addon',
        responses: { 200: downloadUrl },
      },
      (c, { params }) => c.json({ download_url: backups.downloadUrl(recorded(c, params.id), params.backup) }),
    );
    // BackupShow: go-scalingo asks /backups/:id at the API's root, not under the database.
    r.add(
      {
        method: 'get',
        path: `${base}/backups/:backup`,
        summary: 'Get a backup',
        auth: 'addon',
        responses: { 200: databaseBackupEnvelope },
      },
      (c, { params }) => {
        const addon = tokenAddon(deps.addons, c, undefined);
        if (!servers.server(addon.id)) throw lacks(servers, addon, 'database server features');
        return c.json({ database_backup: backups.json(backups.show(addon, params.backup)) });
      },
    );

    r.add(
      {
        method: 'get',
        path: `${base}/databases/:id/users`,
        summary: 'List the users of a database',
        auth: 'addon',
        responses: { 200: databaseUserList },
      },
      async (c, { params }) => c.json({ 'database-users': await users.list(await ready(c, params.id)) }),
    );

    // DatabaseCreateUser / DatabaseDeleteUser: the rules are database-users.ts's.
    r.add(
      {
        method: 'post',
        path: `${base}/databases/:id/users`,
        summary: 'Create a user of a database',
        auth: 'addon',
        middleware: [limitBody(16 * 1024)],
        body: createUserSchema,
        rawBody: true,
        responses: { 201: databaseUserCreated },
      },
      async (c, { params }) => {
        // The token and the server are checked before the body is read.
        const addon = await ready(c, params.id);
        const { database_user: u } = await jsonBody(c, createUserSchema(), 'database_user');
        return c.json({ database_user: await users.create(addon, u) }, 201);
      },
    );
    r.add(
      {
        method: 'delete',
        path: `${base}/databases/:id/users/:name`,
        summary: 'Delete a user of a database',
        auth: 'addon',
        responses: { 204: null },
      },
      async (c, { params }) => {
        await users.remove(await ready(c, params.id), params.name);
        return c.body(null, 204);
      },
    );

    // AddonLogsURL: a signed URL of the server's recent output, read like an app's logs URL.
    r.add(
      {
        method: 'get',
        path: `${base}/databases/:id/logs`,
        summary: "Get a signed URL of the addon server's logs",
        auth: 'addon',
        responses: { 200: logsUrl },
      },
      (c, { params }) => {
        const addon = recorded(c, params.id);
        return c.json({
          url: `${deps.apiUrl()}/_emulator/addon-logs/${addon.id}?${deps.signer.query(LOGS, addon.id)}`,
        });
      },
    );
  }

  r.add(
    {
      method: 'get',
      path: '/_emulator/addon-backups/:backup/archive',
      summary: 'Download a backup (signed URL)',
      auth: 'signed',
      query: signedUrlQuery,
      responses: { 200: { contentType: 'application/gzip', description: 'The backup file' } },
    },
    (c, { params, query }) => {
      const file = backups.archiveFile(params.backup, query);
      const body = Readable.toWeb(createReadStream(file.path)) as ReadableStream;
      return c.body(body, 200, {
        'content-type': 'application/gzip',
        'content-length': String(file.size),
        'content-disposition': `attachment; filename="${file.name}"`,
      });
    },
  );

  r.add(
    {
      method: 'get',
      path: '/_emulator/addon-logs/:id',
      summary: "The addon server's recent output (signed URL); follow it with a WebSocket",
      auth: 'signed',
      query: lazySchema(() =>
        z.object({
          token: z.string(),
          timestamp: z.string(),
          n: z.string().optional(),
          stream: z.string().optional(),
        }),
      ),
      responses: { 200: { contentType: 'text/plain', description: 'One formatted line per log line' }, 204: null },
    },
    (c, { params, query }) => {
      const id = checkAddonLogsUrl(deps.signer, servers, params.id, query);
      if (query.stream === 'true')
        throw ApiError.badRequest(
          'follow the logs of an addon with a WebSocket (Upgrade: websocket), as `scalingo logs --addon -f` does',
        );
      const n = lineCount(query.n, MAX_LINES) ?? 100;
      const lines = servers.logs.recent(id, n);
      // The Go CLI prints "There is no log" on 204, like for an app.
      if (!lines.length) return c.body(null, 204);
      return c.body(lines.map((l) => `${formattedLine(l)}\n`).join(''), 200, {
        'content-type': 'text/plain; charset=utf-8',
      });
    },
  );
  return r;
}
