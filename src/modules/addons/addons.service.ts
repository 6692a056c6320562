import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { defined } from '../../shared/defined.ts';
import { prefixedUuid } from '../../shared/ids.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { type EventsService } from '../events/events.service.ts';
import { type AddonServers } from './addon-servers.ts';
import { ADDON_PROVIDERS, findPlan, findProvider, isDedicated, providerJson } from './addons.catalog.ts';
import { type AddonRow, type AddonsStore } from './addons.store.ts';
import { type TcpGateways } from './tcp-gateways.ts';

export interface AddonsServiceDeps {
  db: Db;
  store: AddonsStore;
  apps: AppsService;
  events: EventsService;
  clock: Clock;
  /** Real servers for the database providers (issue #15); absent = stand-ins only. */
  servers?: AddonServers;
  /** The TCP gateway addons' listeners (issue 34). */
  gateways?: Pick<TcpGateways, 'provides' | 'provision' | 'remove'>;
  /** Sets an addon's status with its timeline event (addon-status.ts). */
  setStatus?: (addonId: string, status: string) => void;
}

/** Lifetime of an addon token (the database API's bearer), as the platform's bearer tokens: 1 hour. */
export const ADDON_TOKEN_TTL_MS = 3_600_000;

export function createAddonsService(deps: AddonsServiceDeps) {
  const { store, clock } = deps;
  // Addon tokens are signed with a key of this run: the clients ask for a fresh one per command.
  const tokenKey = randomBytes(32);
  const sign = (payload: string) => createHmac('sha256', tokenKey).update(payload).digest('base64url');

  /** The platform's Addon resource (research §3.3). */
  function toJson(a: AddonRow) {
    const p = findProvider(a.provider_id);
    const plan = p ? findPlan(p, a.plan_id) : undefined;
    return {
      id: a.id,
      app_id: a.app_id,
      resource_id: a.resource_id,
      status: a.status,
      // Never null: the CLI dereferences addon_provider.name (research §3.1).
      addon_provider: p ? providerJson(p) : { id: a.provider_id, name: a.provider_id, logo_url: '' },
      plan: plan ?? { id: a.plan_id, name: a.plan_id, display_name: a.plan_id, disabled_alternative_plan_id: null },
      provisioned_at: isoDate(a.created_at),
      deprovisioned_at: null,
      updated_at: isoDate(a.updated_at),
      // The emulator's own: what a provisioning addon is doing, or why it is in error (docs/fidelity.md).
      ...statusMessage(a),
    };
  }

  function statusMessage(a: AddonRow): { status_message?: string } {
    const message = a.status === 'running' ? undefined : deps.servers?.statusMessage(a.id);
    return message ? { status_message: message } : {};
  }

  function typeData(a: AddonRow) {
    const p = findProvider(a.provider_id);
    return {
      resource_id: a.resource_id,
      addon_provider_name: p?.name ?? a.provider_id,
      plan_name: (p && findPlan(p, a.plan_id)?.name) ?? a.plan_id,
    };
  }

  const service = {
    toJson,
    /** The addon of a visible app, or 404 {resource: "addon"}. */
    visibleAddon(user: UserRow, appParam: string, addonId: string): { app: AppRow; addon: AddonRow } {
      const app = deps.apps.visibleApp(user, appParam);
      const addon = store.find(app.id, addonId);
      if (!addon) throw ApiError.notFound('addon');
      return { app, addon };
    },
    /** Names of the variables a real addon set on its app ([] for stand-ins). */
    variablesOf(addonId: string): string[] {
      const s = deps.servers?.server(addonId);
      return s ? (JSON.parse(s.variables) as string[]) : [];
    },
    providerName(a: AddonRow): string {
      return findProvider(a.provider_id)?.name ?? a.provider_id;
    },
    list(user: UserRow, appParam: string) {
      const app = deps.apps.visibleApp(user, appParam);
      return store.forApp(app.id).map(toJson);
    },
    provision(
      user: UserRow,
      appParam: string,
      input: { addon_provider_id: string; plan_id: string },
      opts: { dedicated?: boolean } = {},
    ) {
      const app = deps.apps.writableApp(user, appParam, 'change addons');
      const provider = findProvider(input.addon_provider_id);
      if (provider && isDedicated(provider.id) && !opts.dedicated) {
        throw ApiError.invalid(
          'addon_provider_id',
          `${provider.id} is a dedicated database technology: create one with POST /v1/databases (scalingo database-create)`,
        );
      }
      if (!provider)
        throw ApiError.invalid(
          'addon_provider_id',
          `is not a known addon provider (known: ${ADDON_PROVIDERS.map((p) => p.id).join(', ')})`,
        );
      const plan = findPlan(provider, input.plan_id);
      if (!plan)
        throw ApiError.invalid(
          'plan_id',
          `is not a plan of ${provider.id} (plans: ${provider.plans.map((p) => p.name).join(', ')})`,
        );
      const now = clock.now();
      const short = provider.id.replace(/^scalingo-/, '');
      const row: AddonRow = {
        id: prefixedUuid('ad'),
        app_id: app.id,
        provider_id: provider.id,
        plan_id: plan.id,
        resource_id: `${app.name.replace(/-/g, '_')}_${short}_${randomBytes(2).toString('hex')}`,
        // A server, or a gateway's listener, is `provisioning` until it answers.
        status:
          deps.servers?.provides(provider.id) || deps.gateways?.provides(provider.id) ? 'provisioning' : 'running',
        created_at: now,
        updated_at: now,
      };
      tx(deps.db, () => {
        store.insert(row);
        deps.events.record({ type: 'new_addon', app, user, typeData: typeData(row) });
        if (deps.servers?.provides(provider.id)) deps.servers.provision(row, app, plan.name);
      });
      const gateways = deps.gateways;
      if (gateways?.provides(provider.id)) {
        const setStatus = deps.setStatus ?? store.setStatus;
        void gateways.provision(row.id, app.id).then(
          () => setStatus(row.id, 'running'),
          () => setStatus(row.id, 'error'),
        );
      }
      return toJson(row);
    },
    changePlan(user: UserRow, appParam: string, addonId: string, planId: string) {
      const { addon } = service.visibleAddon(user, appParam, addonId);
      deps.apps.writableApp(user, appParam, 'change addons');
      const plan = findPlan(defined(findProvider(addon.provider_id), `provider ${addon.provider_id}`), planId);
      if (!plan) throw ApiError.invalid('plan_id', 'is not a plan of this addon provider');
      const app = defined(deps.apps.find(addon.app_id), `app ${addon.app_id}`);
      tx(deps.db, () => {
        store.setPlan(addon.id, plan.id, clock.now());
        // go-scalingo EventUpgradeAddonTypeData: the addon's fields and the old and new plan names.
        deps.events.record({
          type: 'upgrade_addon',
          app,
          user,
          typeData: {
            ...typeData(addon),
            old_plan_name: typeData(addon).plan_name,
            new_plan_name: plan.name,
            plan_name: plan.name,
          },
        });
      });
      const servers = deps.servers;
      // A running server restarts with the plan's memory, as on the platform: the database is `updating` (its calls
      // answer 503) until it answers again, then `running` or `error` (issue 22; the Terraform provider waits for it).
      if (servers?.server(addon.id) && addon.status === 'running') servers.setStatus(addon.id, 'updating');
      void servers?.changePlan(addon.id, plan.name, addon.status).catch(() => undefined); // its failures end in the addon's status
      return toJson(defined(store.find(addon.app_id, addon.id), `addon ${addon.id}`));
    },
    remove(user: UserRow, appParam: string, addonId: string): void {
      const { app, addon } = service.visibleAddon(user, appParam, addonId);
      deps.apps.writableApp(user, appParam, 'change addons');
      const servers = deps.servers;
      const server = servers?.server(addon.id);
      if (servers && server) void servers.removeServer(server); // container, volume, variables
      deps.gateways?.remove(addon.id); // listener, TCP_URL
      tx(deps.db, () => {
        store.delete(addon.id); // its drains go with it (ON DELETE CASCADE)
        deps.events.record({ type: 'delete_addon', app, user, typeData: typeData(addon) });
      });
    },
    /** POST …/addons/:id/token — the bearer of the database API for this addon (go-scalingo AddonToken). */
    token(user: UserRow, appParam: string, addonId: string): string {
      const { addon } = service.visibleAddon(user, appParam, addonId);
      deps.apps.writableApp(user, appParam, 'access the database of an addon');
      const payload = `${addon.id}.${clock.now() + ADDON_TOKEN_TTL_MS}`;
      return `adt.${payload}.${sign(payload)}`;
    },
    /** The addon an addon token is for, if the token is valid and not expired. */
    addonOfToken(token: string): AddonRow | undefined {
      const m = /^adt\.(ad-[0-9a-f-]{36})\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(token);
      if (!m) return undefined;
      const expected = Buffer.from(sign(`${m[1]}.${m[2]}`));
      const given = Buffer.from(m[3]);
      if (given.length !== expected.length || !timingSafeEqual(given, expected) || Number(m[2]) <= clock.now())
        return undefined;
      return store.byId(m[1]);
    },
  };
  return service;
}

export type AddonsService = ReturnType<typeof createAddonsService>;
