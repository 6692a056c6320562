// `logs-archives --addon` (go-scalingo AddonLogsArchives): GET /databases/:id/logs_archives?page=N on the
// database API. The platform archives a database's logs daily; the emulator keeps an addon server's
// recent output (addon-logs.ts), so page 1 holds one archive of it, gzipped, downloaded from a signed,
// expiring URL (`to` is the time of its last line, the download stops there). Later pages are empty.
import { gzipSync } from 'node:zlib';
import { z } from 'zod';
import { ApiRoutes } from '../../http/api-routes.ts';
import { lazySchema, signedUrlQuery } from '../../http/api-schemas.ts';
import { ApiError } from '../../http/errors.ts';
import { isoDate } from '../../shared/clock.ts';
import { formattedLine, type StoredLine } from '../logs/log-line.ts';
import { type UrlSigner } from '../logs/logs-url.ts';
import { type AddonServers } from './addon-servers.ts';
import { type AddonsService } from './addons.service.ts';
import { DATABASE_API_BASES, recordedAddon } from './database-api.ts';

const ARCHIVE = 'addon-logs-archive';
const URL_TTL_MS = 10 * 60_000;
const KEEP = 1000;

const archiveList = lazySchema(() =>
  z.object({
    archives: z.array(z.object({ url: z.string(), from: z.string(), to: z.string(), size: z.number() })),
    has_more: z.boolean(),
    next_cursor: z.string(),
  }),
);

export function addonLogsArchivesRoutes(deps: {
  addons: AddonsService;
  servers: AddonServers;
  signer: UrlSigner;
  apiUrl: () => string;
}) {
  const r = new ApiRoutes('database-api');
  /** The archive's content: the lines up to `toMs`, gzipped. */
  const archive = (lines: StoredLine[]) => gzipSync(lines.map((l) => `${formattedLine(l)}\n`).join(''));

  for (const base of DATABASE_API_BASES) {
    r.add(
      {
        method: 'get',
        path: `${base}/databases/:id/logs_archives`,
        summary: "List the logs archives of an addon's server (one: its recent output)",
        auth: 'addon',
        query: lazySchema(() => z.object({ page: z.string().optional(), cursor: z.string().optional() })),
        responses: { 200: archiveList },
      },
      (c, { params, query }) => {
        const addon = recordedAddon(deps.addons, deps.servers, c, params.id);
        const page = query.page ?? '1';
        if (!/^\d{1,6}$/.test(page) || Number(page) < 1) throw ApiError.invalid('page', 'must be a positive integer');
        const lines = deps.servers.logs.recent(addon.id, KEEP);
        const last = lines[lines.length - 1];
        const first = lines[0];
        if (page !== '1' || !first || !last) return c.json({ archives: [], has_more: false, next_cursor: '' });
        const url = `${deps.apiUrl()}/_emulator/addon-logs-archives/${addon.id}/${last.time_ms}?${deps.signer.query(ARCHIVE, `${addon.id}/${last.time_ms}`)}`;
        return c.json({
          archives: [
            { url, from: isoDate(first.time_ms) ?? '', to: isoDate(last.time_ms) ?? '', size: archive(lines).length },
          ],
          has_more: false,
          next_cursor: '',
        });
      },
    );
  }

  r.add(
    {
      method: 'get',
      path: '/_emulator/addon-logs-archives/:id/:to',
      summary: "Download a logs archive of an addon's server (signed URL)",
      auth: 'signed',
      query: signedUrlQuery,
      responses: { 200: { contentType: 'application/gzip', description: 'The lines, gzipped' } },
    },
    (c, { params, query }) => {
      const { id, to } = params;
      const check = deps.signer.check(ARCHIVE, query.token, query.timestamp, URL_TTL_MS);
      if (!check.ok)
        throw ApiError.unauthorized(
          check.reason === 'expired'
            ? 'this download URL has expired: list the archives again'
            : 'invalid download token',
        );
      if (check.subject !== `${id}/${to}` || !deps.servers.server(id))
        throw ApiError.unauthorized('invalid download token');
      const lines = deps.servers.logs.recent(id, KEEP).filter((l) => l.time_ms <= Number(to));
      if (!lines.length) throw ApiError.notFound('logs_archive', 'the lines of this archive are no longer kept');
      const body = archive(lines);
      return c.body(body, 200, {
        'content-type': 'application/gzip',
        'content-length': String(body.length),
        'content-disposition': `attachment; filename="${id}-${to}.log.gz"`,
      });
    },
  );
  return r;
}
