// Point-in-time recovery on the database API (addon-pitr.ts): go-scalingo's DatabaseGetPITRRecoveryWindow
// (GET /databases/:id/pitr/recovery_window → {recovery_window}) and DatabaseRestorePITR (POST
// /databases/:id/pitr/restore {restore_time} → 201 {operation}), what `database-pitr-recovery-window` and
// `database-pitr-restore` of the CLI call.
import { z } from 'zod';
import { ApiRoutes } from '../../http/api-routes.ts';
import { lazySchema } from '../../http/api-schemas.ts';
import { limitBody } from '../../http/middleware/json-only.ts';
import { jsonBody } from '../../http/validate.ts';
import { operationJson } from '../operations/operations.service.ts';
import { type AddonPitr } from './addon-pitr.ts';
import { type AddonServers } from './addon-servers.ts';
import { type AddonsService } from './addons.service.ts';
import { DATABASE_API_BASES, readyAddon } from './database-api.ts';

const restoreBody = lazySchema(() => z.object({ restore_time: z.iso.datetime({ offset: true }) }));
const recoveryWindow = lazySchema(() =>
  z.object({
    recovery_window: z.object({
      earliest_recoverable_at: z.string().optional(),
      latest_recoverable_at: z.string().optional(),
    }),
  }),
);
const operation = lazySchema(() =>
  z.object({
    operation: z.object({ id: z.string(), app_id: z.string(), status: z.string(), type: z.string() }).passthrough(),
  }),
);

export function databasePitrRoutes(deps: { addons: AddonsService; servers: AddonServers; pitr: AddonPitr }) {
  const { servers, pitr } = deps;
  const r = new ApiRoutes('database-api');
  for (const base of DATABASE_API_BASES) {
    r.add(
      {
        method: 'get',
        path: `${base}/databases/:id/pitr/recovery_window`,
        summary:
          'The times a point-in-time recovery may restore the database to (PostgreSQL, Starter and Business plans)',
        auth: 'addon',
        responses: { 200: recoveryWindow },
      },
      async (c, { params }) => {
        const addon = await readyAddon(deps.addons, servers, c, params.id);
        pitr.check(addon);
        return c.json({ recovery_window: await pitr.recoveryWindow(addon) });
      },
    );
    r.add(
      {
        method: 'post',
        path: `${base}/databases/:id/pitr/restore`,
        summary: 'Restore the database to a point in time (an operation: the database is restoring until it ends)',
        auth: 'addon',
        middleware: [limitBody(4 * 1024)],
        body: restoreBody,
        rawBody: true,
        responses: { 201: operation },
      },
      async (c, { params }) => {
        const addon = await readyAddon(deps.addons, servers, c, params.id);
        pitr.check(addon);
        const body = await jsonBody(c, restoreBody());
        const op = await pitr.restore(addon, new Date(body.restore_time));
        return c.json({ operation: operationJson(op) }, 201);
      },
    );
  }
  return r;
}
