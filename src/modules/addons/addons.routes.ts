import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { jsonBody } from '../../http/validate.ts';
import type { AddonsService } from './addons.service.ts';
import { ADDON_PROVIDERS, findProvider, providerListJson } from './addons.catalog.ts';

const provisionSchema = z.object({
  addon: z.object({ addon_provider_id: z.string().min(1, 'missing field'), plan_id: z.string().min(1, 'missing field'), options: z.record(z.string(), z.unknown()).nullish() }),
});
const upgradeSchema = z.object({ addon: z.object({ plan_id: z.string().min(1, 'missing field') }) });

/** Stand-in addons (research §3.3): list, show, provision, change plan, remove; and the catalogue. */
export function addonsRoutes(deps: { addons: AddonsService }) {
  const { addons } = deps;
  const r = new Hono<AppEnv>();
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  r.get('/v1/addon_providers', (c) => c.json({ addon_providers: ADDON_PROVIDERS.map(providerListJson) }));
  r.get('/v1/addon_providers/:id/plans', (c) => {
    const p = findProvider(c.req.param('id'));
    if (!p) throw ApiError.notFound('addon_provider');
    return c.json({ plans: p.plans });
  });

  r.get('/v1/apps/:app/addons', (c) => c.json({ addons: addons.list(user(c), c.req.param('app')) }));
  r.get('/v1/apps/:app/addons/:id', (c) => c.json({ addon: addons.toJson(addons.visibleAddon(user(c), c.req.param('app'), c.req.param('id')).addon) }));

  r.post('/v1/apps/:app/addons', async (c) => {
    const { addon } = await jsonBody(c, provisionSchema, 'addon');
    const json = addons.provision(user(c), c.req.param('app'), addon);
    return c.json({ addon: json, message: 'The addon is a stand-in: no database server runs in the emulator.', variables: [] }, 201);
  });

  r.patch('/v1/apps/:app/addons/:id', async (c) => {
    const { addon } = await jsonBody(c, upgradeSchema, 'addon');
    return c.json({ addon: addons.changePlan(user(c), c.req.param('app'), c.req.param('id'), addon.plan_id), message: 'Plan changed', variables: [] });
  });

  // The bearer of the database API (SCALINGO_DB_URL): go-scalingo AddonTokenRes {"addon":{"token"}}.
  r.post('/v1/apps/:app/addons/:id/token', (c) => c.json({ addon: { token: addons.token(user(c), c.req.param('app'), c.req.param('id')) } }));

  r.delete('/v1/apps/:app/addons/:id', (c) => {
    addons.remove(user(c), c.req.param('app'), c.req.param('id'));
    return c.body(null, 204);
  });
  return r;
}
