import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';

// Requests exactly as go-scalingo v11 sends them (http/api_request.go: JSON body even for POSTs without
// params, `{}`; GET/DELETE params in the query; these headers) for domains, autoscalers, collaborators,
// addons, the database API and cron tasks, and the fields it decodes. Sources: domains.go, autoscalers.go,
// collaborators.go, addons.go, addons_providers.go, databases.go, backups.go, cron_tasks.go; the CLI and
// the Terraform provider build their params with these functions.
const GO_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json',
  'user-agent': 'Scalingo CLI v1.48.0',
};
const tls = (f: string) => readFileSync(new URL(`../../fixtures/tls/${f}`, import.meta.url), 'utf8');

describe('what go-scalingo sends for domains, autoscalers, collaborators, addons and cron tasks', () => {
  let h: Harness;
  let bearer: string;
  const go = (method: string, path: string, body?: unknown, as: string = bearer) =>
    h.call(method, path, {
      as: { bearer: as },
      headers: GO_HEADERS,
      raw: method === 'GET' || method === 'DELETE' ? undefined : JSON.stringify(body === undefined ? {} : body),
    });

  beforeAll(async () => {
    h = await startEmulator();
    bearer = await h.bearer();
    await go('POST', '/v1/apps', { app: { name: 'go-extra-app' } });
  });
  afterAll(() => h.stop());

  it('domains: DomainsAdd (Terraform: canonical + letsencrypt_enabled), DomainSetCertificate, DomainSetCanonical, DomainUnsetCertificate, DomainsShow, DomainsRemove', async () => {
    const add = await go('POST', '/v1/apps/go-extra-app/domains', {
      domain: { name: 'shop.localhost', canonical: false, letsencrypt_enabled: true },
    });
    expect(add.status).toBe(201);
    const d = add.body.domain;
    for (const k of [
      'id',
      'app_id',
      'name',
      'letsencrypt_enabled',
      'ssl',
      'validity',
      'canonical',
      'letsencrypt',
      'letsencrypt_status',
      'ssl_status',
      'acme_dns_fqdn',
      'acme_dns_value',
      'acme_dns_error',
    ])
      expect(d).toHaveProperty(k);
    // CLI domains-add: {"domain":{"name":…}} only (pointers omitted).
    expect((await go('POST', '/v1/apps/go-extra-app/domains', { domain: { name: 'www.shop.localhost' } })).status).toBe(
      201,
    );
    const cert = await go('PATCH', `/v1/apps/go-extra-app/domains/${d.id}`, {
      domain: { tlscert: tls('shop.crt'), tlskey: tls('shop.key') },
    });
    expect(cert.body.domain).toMatchObject({ ssl: true, tlscert: '/CN=shop.localhost' });
    expect(Number.isNaN(Date.parse(cert.body.domain.validity))).toBe(false);
    expect(
      (await go('PATCH', `/v1/apps/go-extra-app/domains/${d.id}`, { domain: { canonical: true } })).body.domain
        .canonical,
    ).toBe(true);
    expect(
      (await go('PATCH', `/v1/apps/go-extra-app/domains/${d.id}`, { domain: { tlscert: '', tlskey: '' } })).body.domain
        .ssl,
    ).toBe(false);
    // DomainUnsetCanonical: list, then PATCH the canonical one with false.
    const list = (await go('GET', '/v1/apps/go-extra-app/domains')).body.domains;
    const canonical = list.find((x: { canonical: boolean }) => x.canonical);
    expect(
      (await go('PATCH', `/v1/apps/go-extra-app/domains/${canonical.id}`, { domain: { canonical: false } })).body.domain
        .canonical,
    ).toBe(false);
    expect((await go('GET', `/v1/apps/go-extra-app/domains/${d.id}`)).body.domain.name).toBe('shop.localhost');
    const del = await go('DELETE', `/v1/apps/go-extra-app/domains/${d.id}`);
    expect(del.status).toBe(204);
    expect((await go('GET', `/v1/apps/go-extra-app/domains/${d.id}`)).body).toEqual({
      resource: 'domain',
      error: 'not found',
    });
  });

  it('autoscalers: AutoscalerAdd (the whole struct), AutoscalersList, AutoscalerShow, AutoscalerUpdate (unwrapped pointers), AutoscalerRemove', async () => {
    const add = await go('POST', '/v1/apps/go-extra-app/autoscalers', {
      autoscaler: {
        id: '',
        app_id: '',
        container_type: 'web',
        metric: 'cpu',
        target: 0.75,
        min_containers: 2,
        max_containers: 4,
        disabled: false,
      },
    });
    expect(add.status).toBe(201);
    const a = add.body.autoscaler;
    expect(a).toMatchObject({
      container_type: 'web',
      metric: 'cpu',
      target: 0.75,
      min_containers: 2,
      max_containers: 4,
      disabled: false,
    });
    expect(
      (await go('GET', '/v1/apps/go-extra-app/autoscalers')).body.autoscalers.map((x: { id: string }) => x.id),
    ).toEqual([a.id]);
    expect((await go('GET', `/v1/apps/go-extra-app/autoscalers/${a.id}`)).body.autoscaler.id).toBe(a.id);
    // CLI autoscalers-update --container-type web --max-containers 5 → {"max_containers":5}.
    expect(
      (await go('PATCH', `/v1/apps/go-extra-app/autoscalers/${a.id}`, { max_containers: 5 })).body.autoscaler
        .max_containers,
    ).toBe(5);
    // Terraform: every changed field, disabled included.
    expect(
      (
        await go('PATCH', `/v1/apps/go-extra-app/autoscalers/${a.id}`, {
          metric: 'rpm_per_container',
          target: 100,
          disabled: true,
        })
      ).body.autoscaler,
    ).toMatchObject({ metric: 'rpm_per_container', target: 100, disabled: true });
    expect((await go('DELETE', `/v1/apps/go-extra-app/autoscalers/${a.id}`)).status).toBe(204);
    expect((await go('GET', '/v1/apps/go-extra-app/autoscalers')).body).toEqual({ autoscalers: [] });
  });

  it('collaborators: CollaboratorAdd with is_limited, CollaboratorUpdate {"collaborator":{"is_limited"}}', async () => {
    const add = await go('POST', '/v1/apps/go-extra-app/collaborators', {
      collaborator: { email: 'other@example.test', is_limited: true },
    });
    expect(add.status).toBe(201);
    expect(add.body.collaborator).toMatchObject({ email: 'other@example.test', is_limited: true, status: 'accepted' });
    const other = await h.bearer(TOKENS.other);
    expect((await go('PUT', '/v1/apps/go-extra-app', { force_https: true }, other)).status).toBe(403);
    const up = await go('PATCH', `/v1/apps/go-extra-app/collaborators/${add.body.collaborator.id}`, {
      collaborator: { is_limited: false },
    });
    expect(up.status).toBe(200);
    expect(up.body.collaborator).toMatchObject({ id: add.body.collaborator.id, is_limited: false });
    expect((await go('PUT', '/v1/apps/go-extra-app', { force_https: true }, other)).status).toBe(200);
    const ev = (await go('GET', '/v1/apps/go-extra-app/events')).body.events.find(
      (e: { type: string }) => e.type === 'change_collaborator_role',
    );
    expect(ev).toMatchObject({
      type: 'change_collaborator_role',
      type_data: { collaborator: { email: 'other@example.test', is_limited: false } },
    });
    expect(
      (await go('PATCH', '/v1/apps/go-extra-app/collaborators/nope', { collaborator: { is_limited: true } })).status,
    ).toBe(404);
    expect(
      (await go('PATCH', `/v1/apps/go-extra-app/collaborators/${add.body.collaborator.id}`, { collaborator: {} })).body,
    ).toEqual({ errors: { is_limited: ['missing field'] } });
  });

  it('addons: AddonProvidersList, AddonProviderPlansList (?show_all=false), AddonProvision with options null, AddonToken (body {}), then the database API with the addon token', async () => {
    const providers = (await go('GET', '/v1/addon_providers')).body.addon_providers;
    const pg = providers.find((p: { id: string }) => p.id === 'scalingo-postgresql');
    for (const k of [
      'id',
      'logo_url',
      'name',
      'short_description',
      'description',
      'category',
      'provider_name',
      'provider_url',
      'hds_available',
      'plans',
    ])
      expect(pg).toHaveProperty(k);
    const plans = (await go('GET', '/v1/addon_providers/scalingo-postgresql/plans?show_all=false')).body.plans;
    const prov = await go('POST', '/v1/apps/go-extra-app/addons', {
      addon: { addon_provider_id: 'scalingo-postgresql', plan_id: plans[0].id, options: null },
    });
    expect(prov.status).toBe(201);
    const id = prov.body.addon.id;
    const tok = await go('POST', `/v1/apps/go-extra-app/addons/${id}/token`, {});
    expect(tok.status).toBe(200);
    const token = tok.body.addon.token as string;
    // DBAPI client: SCALINGO_DB_URL + /api, Bearer <addon token>, same headers.
    const dbapi = (path: string) => h.call('GET', `/api${path}`, { as: { bearer: token }, headers: GO_HEADERS });
    const db = await dbapi(`/databases/${id}`);
    expect(db.status).toBe(200);
    expect(db.body.database).toMatchObject({
      id,
      type_name: 'postgresql',
      features: [],
      maintenance_window: { weekday_utc: 0, starting_hour_utc: 0, duration_in_hour: 0 },
    });
    for (const path of [
      `/databases/${id}/logs`,
      `/databases/${id}/backups`,
      `/databases/${id}/users`,
      `/databases/${id}/logs_archives?page=1`,
    ]) {
      const res = await dbapi(path);
      expect(res.status, path).toBe(400);
      expect(Object.keys(res.body)).toEqual(['error']);
    }
  });

  it('cron tasks: CronTasksGet on an app whose code has no cron.json → 404 (the CLI prints an empty table)', async () => {
    const res = await go('GET', '/v1/apps/go-extra-app/cron_tasks');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ resource: 'cron_tasks' });
  });
});
