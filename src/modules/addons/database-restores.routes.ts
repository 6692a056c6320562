// Restoring a backup into the running server (addon-restores.ts), on the database API.
import { z } from 'zod';
import { ApiRoutes } from '../../http/api-routes.ts';
import { lazySchema } from '../../http/api-schemas.ts';
import { type AddonRestores } from './addon-restores.ts';
import { type AddonServers } from './addon-servers.ts';
import { type AddonsService } from './addons.service.ts';
import { DATABASE_API_BASES, notReady, readyAddon, tokenAddon } from './database-api.ts';

const restore = lazySchema(() =>
  z.object({
    id: z.string(),
    database_id: z.string(),
    backup_id: z.string(),
    status: z.string(),
    error: z.string(),
    started_at: z.string(),
    finished_at: z.string().nullable(),
  }),
);
const restoreEnvelope = lazySchema(() => z.object({ restore: restore() }));

export function databaseRestoresRoutes(deps: {
  addons: AddonsService;
  servers: AddonServers;
  restores: AddonRestores;
}) {
  const { servers, restores } = deps;
  const r = new ApiRoutes('database-api');
  for (const base of DATABASE_API_BASES) {
    r.add(
      {
        method: 'post',
        path: `${base}/databases/:id/backups/:backup/restore`,
        summary: "Restore a finished backup into the running server (the database is 'restoring' until it ends)",
        auth: 'addon',
        responses: { 202: restoreEnvelope },
      },
      async (c, { params }) => {
        const addon = await readyAddon(deps.addons, servers, c, params.id);
        if (!(await servers.running(addon.id))) throw notReady(addon);
        return c.json({ restore: restores.json(restores.start(addon, params.backup)) }, 202);
      },
    );
    // Readable while the restore runs (the database itself answers 503 meanwhile).
    r.add(
      {
        method: 'get',
        path: `${base}/databases/:id/restores/:restore`,
        summary: 'How a restore went',
        auth: 'addon',
        responses: { 200: restoreEnvelope },
      },
      (c, { params }) => {
        const addon = tokenAddon(deps.addons, c, params.id);
        return c.json({ restore: restores.json(restores.show(addon, params.restore)) });
      },
    );
  }
  return r;
}
