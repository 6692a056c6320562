// The rules of the logs service (#20–#22): who may read, how many lines, which containers, and
// the archive list (#21). Transport-free: routes (text, SSE) and the WebSocket handler call it.
import { ApiError } from '../../http/errors.ts';
import { lineCount } from '../../http/validate.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { type Archiver } from './archives.ts';
import { compileFilter, formatLine } from './log-line.ts';
import { type LogsHub, type StreamSink, type Subscription } from './logs.hub.ts';
import { type LogsStore } from './logs.store.ts';
import { type UrlSigner } from './logs-url.ts';

export interface LogsServiceDeps {
  apps: AppsService;
  store: LogsStore;
  hub: LogsHub;
  signer: UrlSigner;
  archiver: Archiver;
  apiUrl: () => string;
  limits: { defaultLines: number; maxLines: number; urlTtlMs: number; archiveUrlTtlMs: number };
}

/** Query of endpoint 22, as received (strings). */
export interface LogsQuery {
  token?: string;
  timestamp?: string;
  n?: string;
  filter?: string;
  stream?: string;
}

export interface ReadRequest {
  app: AppRow;
  /** The user the URL was given to: streams are closed when they lose access (revoke). */
  userId: string;
  /** Lines of history; null = not asked (stream: none, text: the default). */
  n: number | null;
  match: ((container: string) => boolean) | null;
  stream: boolean;
}

const LOGS = 'logs';
const ARCHIVE = 'archive';

// A signed subject names what the URL opens and who it was given to: `<id>:<user id>`. Access is
// checked again at every use, so a collaborator removed after getting a URL cannot use it.
const subjectOf = (id: string, userId: string) => `${id}:${userId}`;
function parseSubject(subject: string): { id: string; userId: string } | null {
  const i = subject.indexOf(':');
  return i > 0 && i < subject.length - 1 ? { id: subject.slice(0, i), userId: subject.slice(i + 1) } : null;
}
const NO_LONGER = 'the user this URL was given to no longer has access to the application';

export function createLogsService(deps: LogsServiceDeps) {
  const { store, limits } = deps;

  const parseN = (raw: string | undefined): number | null => lineCount(raw, limits.maxLines) ?? null;

  function history(app: AppRow, n: number, match: ReadRequest['match']) {
    if (n <= 0) return [];
    return store.last(app.id, n, match ?? undefined);
  }

  return {
    /** #20: a signed URL on the emulator's own port, carrying its query string already. */
    logsUrl(user: UserRow, appParam: string): { app: AppRow; logs_url: string } {
      const app = deps.apps.visibleApp(user, appParam);
      return {
        app,
        logs_url: `${deps.apiUrl()}/apps/${encodeURIComponent(app.name)}/logs?${deps.signer.query(LOGS, subjectOf(app.id, user.id))}`,
      };
    },

    /**
     * A signed logs URL for system events (crash `logs_url`), given to the app's owner like every logs URL
     * (access is checked at use); `filter` narrows it to one container.
     */
    signedUrl(app: AppRow, filter?: string): string {
      const q = filter ? `&filter=${encodeURIComponent(filter)}` : '';
      return `${deps.apiUrl()}/apps/${encodeURIComponent(app.name)}/logs?${deps.signer.query(LOGS, subjectOf(app.id, app.owner_id))}${q}`;
    },

    /** #22 entry: checks the token (401 when invalid or expired) and the parameters (400). */
    authorize(appParam: string, q: LogsQuery): ReadRequest {
      const check = deps.signer.check(LOGS, q.token, q.timestamp, limits.urlTtlMs);
      if (!check.ok) {
        throw ApiError.unauthorized(
          check.reason === 'expired'
            ? 'this logs URL has expired: ask GET /v1/apps/:app/logs for a new one'
            : 'invalid logs token',
        );
      }
      const subject = parseSubject(check.subject);
      if (!subject) throw ApiError.unauthorized('invalid logs token');
      const app = deps.apps.find(appParam);
      if (!app) throw ApiError.notFound('app');
      if (app.id !== subject.id)
        throw ApiError.unauthorized('invalid logs token: it was given for another application');
      if (!deps.apps.hasAccess(subject.userId, app.id)) throw ApiError.unauthorized(NO_LONGER);
      return {
        app,
        userId: subject.userId,
        n: parseN(q.n),
        match: compileFilter(q.filter),
        stream: q.stream === 'true' || q.stream === '1',
      };
    },

    /** Text mode: the last n lines, oldest first, one per line; null when there is none. */
    text(req: ReadRequest): string | null {
      const lines = history(req.app, req.n ?? limits.defaultLines, req.match);
      if (!lines.length) return null;
      let out = '';
      for (const l of lines) out += `${formatLine(l)}\n`;
      return out;
    },

    /**
     * Stream mode: history (only when `n` is given: the CLI dumps history itself before following
     * and sends no `n`), then live lines. History and subscription happen in one tick.
     */
    subscribe(req: ReadRequest, sink: StreamSink): Subscription {
      return deps.hub.subscribe(req.app.id, req.match, sink, history(req.app, req.n ?? 0, req.match), req.userId);
    },

    /** Closes the open streams of an app whose user lost access to it (or of every user, app deleted). */
    revoke(appId: string): number {
      return deps.hub.closeWhere(appId, (userId) => !deps.apps.hasAccess(userId, appId), NO_LONGER);
    },

    /** #21: archives newest first, each with a signed download URL valid archiveUrlTtlMs. */
    archives(user: UserRow, appParam: string, q: { cursor?: string; page?: string }) {
      const app = deps.apps.visibleApp(user, appParam);
      if (q.cursor !== undefined && q.cursor !== '' && !/^\d{1,15}$/.test(q.cursor))
        throw ApiError.badRequest(`invalid cursor "${q.cursor}": use next_cursor from the previous list`);
      let page = 1;
      if (q.page !== undefined && q.page !== '' && q.page !== '0') {
        if (!/^\d{1,9}$/.test(q.page)) throw ApiError.invalid('page', 'must be a whole number');
        page = Number(q.page);
      }
      const res = deps.archiver.list(app.id, { cursor: q.cursor || undefined, page });
      return {
        next_cursor: res.next_cursor,
        has_more: res.has_more,
        archives: res.archives.map((a) => ({
          url: `${deps.apiUrl()}/apps/${encodeURIComponent(app.name)}/logs_archives/${a.id}?${deps.signer.query(ARCHIVE, subjectOf(a.id, user.id))}`,
          size: a.size,
          ...deps.archiver.bounds(a),
        })),
      };
    },

    /** Download of one archive: the signed URL is the only credential; expired → 403. */
    archiveFile(
      appParam: string,
      id: string,
      q: { token?: string; timestamp?: string },
    ): { path: string; name: string; size: number } {
      const check = deps.signer.check(ARCHIVE, q.token, q.timestamp, limits.archiveUrlTtlMs);
      const subject = check.ok ? parseSubject(check.subject) : null;
      if (!check.ok || subject?.id !== id) {
        throw ApiError.forbidden(
          check.ok || check.reason === 'invalid'
            ? 'invalid archive URL signature'
            : 'this archive URL has expired: list the archives again for a fresh URL',
        );
      }
      const app = deps.apps.find(appParam);
      const a = deps.archiver.find(id);
      if (!app || !a || a.app_id !== app.id) throw ApiError.notFound('logs_archive');
      if (!deps.apps.hasAccess(subject.userId, app.id)) throw ApiError.forbidden(NO_LONGER);
      return { path: deps.archiver.path(a), name: a.file, size: a.size };
    },
  };
}

export type LogsService = ReturnType<typeof createLogsService>;
