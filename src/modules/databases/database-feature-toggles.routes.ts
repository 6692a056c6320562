// `database-enable-feature` / `database-disable-feature` (go-scalingo DatabaseEnableFeature: POST /databases/:id/features
// {feature: {name}} → 200 {name, status, message}; DatabaseDisableFeature: DELETE /databases/:id/features?feature=…
// → 200 {message}). force-ssl is applied in the server (addon-tls-scripts.ts: PostgreSQL's pg_hba hostssl lines,
// MariaDB's require_secure_transport, Redis's TLS port in place of the plain one); a kind without TLS would refuse it.
// publicly-available is recorded: the local server's port is published on 127.0.0.1 either way.
import { z } from 'zod';
import { ApiRoutes } from '../../http/api-routes.ts';
import { lazySchema } from '../../http/api-schemas.ts';
import { ApiError } from '../../http/errors.ts';
import { type AddonServers } from '../addons/addon-servers.ts';
import { type AddonsService } from '../addons/addons.service.ts';
import { type AddonRow } from '../addons/addons.store.ts';
import { DATABASE_API_BASES, notReady, readyAddon } from '../addons/database-api.ts';
import { type DatabaseSettingsService } from './database-settings.ts';

const FEATURES = ['force-ssl', 'publicly-available'] as const;
const enableSchema = lazySchema(() => z.object({ feature: z.object({ name: z.string().max(64) }) }));
const enabled = lazySchema(() => z.object({ name: z.string(), status: z.string(), message: z.string() }));
const disabled = lazySchema(() => z.object({ message: z.string() }));

export function databaseFeatureTogglesRoutes(deps: {
  addons: AddonsService;
  servers: AddonServers;
  settings: DatabaseSettingsService;
}) {
  const { servers, settings } = deps;
  const r = new ApiRoutes('database-api');

  const known = (name: string | undefined): (typeof FEATURES)[number] => {
    const f = FEATURES.find((x) => x === name);
    if (!f) throw ApiError.invalid('feature', `is not a feature of the database (known: ${FEATURES.join(', ')})`);
    return f;
  };
  async function apply(addon: AddonRow, name: string, on: boolean): Promise<void> {
    if (name !== 'force-ssl') return;
    const done = await servers.forceSsl(addon.id, on).catch(async (err: Error) => {
      if (!(await servers.running(addon.id))) throw notReady(addon);
      throw ApiError.badRequest(`the server refused the change: ${err.message}`);
    });
    if (!done)
      throw ApiError.badRequest(
        `force-ssl needs a server that serves TLS: the emulator's ${servers.server(addon.id)?.kind ?? ''} server does not`,
      );
  }
  const set = (addon: AddonRow, name: string, on: boolean) => {
    const current = settings.get(addon.id).features.filter((f) => f !== name);
    settings.update(addon.id, { features: on ? [...current, name] : current });
  };

  for (const base of DATABASE_API_BASES) {
    r.add(
      {
        method: 'post',
        path: `${base}/databases/:id/features`,
        summary: 'Turn a database feature on (force-ssl applied in the server)',
        auth: 'addon',
        body: enableSchema,
        responses: { 200: enabled },
      },
      async (c, { params, body }) => {
        const addon = await readyAddon(deps.addons, servers, c, params.id);
        const name = known(body.feature.name);
        await apply(addon, name, true);
        set(addon, name, true);
        return c.json({ name, status: 'ACTIVATED', message: `feature ${name} activated` });
      },
    );
    r.add(
      {
        method: 'delete',
        path: `${base}/databases/:id/features`,
        summary: 'Turn a database feature off',
        auth: 'addon',
        query: lazySchema(() => z.object({ feature: z.string().optional() })),
        responses: { 200: disabled },
      },
      async (c, { params, query }) => {
        const addon = await readyAddon(deps.addons, servers, c, params.id);
        const name = known(query.feature);
        await apply(addon, name, false);
        set(addon, name, false);
        return c.json({ message: `feature ${name} deactivated` });
      },
    );
  }
  return r;
}
