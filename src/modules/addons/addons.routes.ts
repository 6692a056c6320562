import { type Context } from 'hono';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { ADDON_PROVIDERS, findProvider, providerListJson } from './addons.catalog.ts';
import {
  addonChange,
  addonEnvelope,
  addonList,
  addonPlanList,
  addonProviderList,
  addonToken,
  provisionSchema,
  upgradeSchema,
} from './addons.schemas.ts';
import { type AddonsService } from './addons.service.ts';

/** Addons (research §3.3): list, show, provision, change plan, remove; and the catalogue. */
export function addonsRoutes(deps: { addons: AddonsService }) {
  const { addons } = deps;
  const r = new ApiRoutes('addons');
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  // Public: go-scalingo sends NoAuth when its client is not authenticated.
  r.add(
    {
      method: 'get',
      path: '/v1/addon_providers',
      summary: 'List the addon catalogue, with categories and plans',
      auth: 'public',
      responses: { 200: addonProviderList },
    },
    (c) => c.json({ addon_providers: ADDON_PROVIDERS.map(providerListJson) }),
  );
  r.add(
    {
      method: 'get',
      path: '/v1/addon_providers/:id/plans',
      summary: 'List the plans of an addon provider',
      auth: 'public',
      responses: { 200: addonPlanList },
    },
    (c, { params }) => {
      const p = findProvider(params.id);
      if (!p) throw ApiError.notFound('addon_provider');
      return c.json({ plans: p.plans });
    },
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/addons',
      summary: 'List the addons of an app',
      responses: { 200: addonList },
    },
    (c) => c.json({ addons: addons.list(user(c), c.get('app').id) }),
  );
  r.add(
    { method: 'get', path: '/v1/apps/:app/addons/:id', summary: 'Get an addon', responses: { 200: addonEnvelope } },
    (c, { params }) => c.json({ addon: addons.toJson(addons.visibleAddon(user(c), c.get('app').id, params.id).addon) }),
  );

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/addons',
      summary: 'Provision an addon',
      description:
        'A real database server starts when the addon kind has one (issue 15); its variables are set on the app.',
      body: provisionSchema,
      bodyRoot: 'addon',
      responses: { 201: addonChange },
    },
    (c, { body: { addon } }) => {
      const json = addons.provision(user(c), c.get('app').id, addon);
      const variables = addons.variablesOf(json.id);
      const message = variables.length
        ? `The ${json.addon_provider.name} server is starting; ${variables.join(', ')} ` +
          `${variables.length > 1 ? 'are' : 'is'} set on the app, whose containers restart once it answers.`
        : 'The addon is a stand-in: no database server runs in the emulator.';
      return c.json({ addon: json, message, variables }, 201);
    },
  );

  r.add(
    {
      method: 'patch',
      path: '/v1/apps/:app/addons/:id',
      summary: 'Change the plan of an addon',
      body: upgradeSchema,
      bodyRoot: 'addon',
      responses: { 200: addonChange },
    },
    (c, { params, body: { addon } }) =>
      c.json({
        addon: addons.changePlan(user(c), c.get('app').id, params.id, addon.plan_id),
        message: 'Plan changed',
        variables: [],
      }),
  );

  // The bearer of the database API (SCALINGO_DB_URL): go-scalingo AddonTokenRes {"addon":{"token"}}.
  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/addons/:id/token',
      summary: 'Get a token of the database API for an addon',
      responses: { 200: addonToken },
    },
    (c, { params }) => c.json({ addon: { token: addons.token(user(c), c.get('app').id, params.id) } }),
  );

  r.add(
    { method: 'delete', path: '/v1/apps/:app/addons/:id', summary: 'Remove an addon', responses: { 204: null } },
    (c, { params }) => {
      addons.remove(user(c), c.get('app').id, params.id);
      return c.body(null, 204);
    },
  );
  return r;
}
