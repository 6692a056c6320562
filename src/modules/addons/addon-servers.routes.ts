import { type Context } from 'hono';
import { stream } from 'hono/streaming';
import { z } from 'zod';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { lineCount } from '../../http/validate.ts';
import { formattedLine } from '../logs/log-line.ts';
import { type AddonServers } from './addon-servers.ts';
import { type AddonsService } from './addons.service.ts';

// What the real addon servers can give beyond the platform's addon resource (issue #15), under the
// emulator's own sub-path (server/) of the addon, with the user's usual credentials: the server's recent output (what
// `scalingo logs --addon` shows on the platform) and a dump made now (the platform's backups:
// pg_dump, mysqldump, an RDB snapshot). The platform serves both from its database API.

const MAX_LINES = 1000;

export function addonServersRoutes(deps: { addons: AddonsService; servers: AddonServers }) {
  const r = new ApiRoutes('addons');
  const serverOf = (c: Context<AppEnv>, id: string) => {
    const { addon } = deps.addons.visibleAddon(c.get('principal').user, c.get('app').id, id);
    if (!deps.servers.server(addon.id))
      throw ApiError.badRequest('this addon is a stand-in: no database server runs, so it has no logs nor backups');
    return addon;
  };

  // Where the host reaches the server (`up` prints it): the port published on 127.0.0.1, null while it does not run.
  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/addons/:id/server',
      summary: "Where the addon's server is reached from the host (emulator)",
      responses: {
        200: z.object({
          server: z.object({
            kind: z.string(),
            running: z.boolean(),
            host: z.string().nullable(),
            port: z.number().nullable(),
          }),
        }),
      },
    },
    async (c, { params }) => {
      const addon = serverOf(c, params.id);
      const kind = deps.servers.server(addon.id)?.kind ?? '';
      const r = await deps.servers.running(addon.id);
      return c.json({
        server: { kind, running: Boolean(r), host: r?.address?.host ?? null, port: r?.address?.port ?? null },
      });
    },
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/addons/:id/server/logs',
      summary: "The addon server's recent output (emulator)",
      query: z.object({ n: z.string().optional() }),
      responses: { 200: { contentType: 'text/plain', description: 'One formatted line per log line' } },
    },
    (c, { params, query }) => {
      const addon = serverOf(c, params.id);
      const n = lineCount(query.n, MAX_LINES) ?? 100;
      const lines = deps.servers.logs.recent(addon.id, n).map((l) => `${formattedLine(l)}\n`);
      return c.text(lines.join(''));
    },
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/addons/:id/server/dump',
      summary: "A dump of the addon's database made now (emulator)",
      responses: {
        200: { contentType: 'application/gzip', description: 'pg_dump, mariadb-dump or an RDB snapshot, gzipped' },
      },
    },
    async (c, { params }) => {
      const addon = serverOf(c, params.id);
      const dump = await deps.servers.dump(addon.id);
      if (!dump) throw ApiError.unavailable('the database server is not running: retry once the addon is running');
      c.header('content-type', 'application/gzip');
      c.header('content-disposition', `attachment; filename="${dump.file}"`);
      return stream(c, async (s) => {
        for await (const chunk of dump.stream as AsyncIterable<Buffer>) await s.write(chunk);
      });
    },
  );
  return r;
}
