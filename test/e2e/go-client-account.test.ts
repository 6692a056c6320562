import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/modules/events/event-types.ts';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';

// Requests exactly as go-scalingo v11 (Scalingo/cli 1.48.0) and the Terraform provider (go-scalingo
// v10) send them: JSON body always on POST/PUT/PATCH (`{}` or `null` when no params), a bare `?` on
// GET/DELETE without params, both User-Agent values, Bearer from the token exchange.
const GO_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json',
  'user-agent': 'Scalingo CLI v1.48.0, Scalingo Go Client',
};

// go-scalingo v11 events_structs.go: every type it specializes (anything else prints "Unknown event").
const GO_EVENT_TYPES = new Set(
  'new_user new_app edit_app delete_app rename_app update_app_project transfer_app restart scale stop_app crash repeated_crash deployment link_scm update_scm unlink_scm new_integration delete_integration authorize_github revoke_github run new_domain edit_domain delete_domain upgrade_database new_addon upgrade_addon delete_addon resume_addon suspend_addon database/add_feature database/remove_feature database_backup_failed database_backup_succeeded new_collaborator accept_collaborator delete_collaborator change_collaborator_role new_variable edit_variable edit_variables delete_variable add_credit add_payment_method add_voucher new_key edit_key delete_key payment_attempt new_alert alert delete_alert new_autoscaler edit_autoscaler delete_autoscaler addon_updated start_region_migration new_log_drain delete_log_drain new_addon_log_drain delete_addon_log_drain new_notifier edit_notifier delete_notifier edit_hds_contact create_data_access_consent new_token regenerate_token delete_token tfa_enabled tfa_disabled login_success login_failure login_lock login_unlock_success password_reset_query password_reset_success stack_changed create_review_app destroy_review_app plan_database_maintenance start_database_maintenance complete_database_maintenance link_github unlink_github delete_project new_project edit_project'.split(
    ' ',
  ),
);

describe('Go clients: projects, stacks, restart bodies and the account surface', () => {
  let h: Harness;
  let bearer: string;
  let otherBearer: string;
  const go = (method: string, path: string, body?: unknown, who: 'dev' | 'other' = 'dev') =>
    h.call(method, method === 'GET' || method === 'DELETE' ? (path.includes('?') ? path : `${path}?`) : path, {
      as: { bearer: who === 'dev' ? bearer : otherBearer },
      headers: GO_HEADERS,
      raw: method === 'GET' || method === 'DELETE' ? undefined : body === undefined ? '{}' : JSON.stringify(body),
    });

  beforeAll(async () => {
    h = await startEmulator();
    bearer = await h.bearer();
    otherBearer = await h.bearer(TOKENS.other);
  });
  afterAll(() => h.stop());

  it('every event type the emulator can record is one go-scalingo knows (the CLI never prints "Unknown event")', () => {
    expect(Object.keys(EVENT_TYPES).filter((t) => !GO_EVENT_TYPES.has(t))).toEqual([]);
  });

  it('apps list carries status and project (the CLI table: NAME ROLE STATUS PROJECT = owner/project)', async () => {
    expect((await go('POST', '/v1/apps', { app: { name: 'go-acct-app' } })).status).toBe(201);
    const list = await go('GET', '/v1/apps');
    const app = list.body.apps.find((a: { name: string }) => a.name === 'go-acct-app');
    expect(app).toMatchObject({
      status: 'new',
      owner: { username: 'dev' },
      project: { id: expect.stringMatching(/^prj-/), name: 'default' },
    });
  });

  it('projects: list (the default one exists), add {name, default}, get, PATCH omitempty, private network 404, delete rules', async () => {
    const list = await go('GET', '/v1/projects');
    expect(list.status).toBe(200);
    expect(list.body.projects).toEqual([
      expect.objectContaining({
        name: 'default',
        default: true,
        flags: {},
        owner: expect.objectContaining({ username: 'dev' }),
      }),
    ]);
    const def = list.body.projects[0];

    const add = await go('POST', '/v1/projects', { project: { name: 'side', default: false } });
    expect(add.status).toBe(201);
    const side = add.body.project;
    expect(side).toMatchObject({ id: expect.stringMatching(/^prj-/), name: 'side', default: false });
    expect(Date.parse(side.created_at)).not.toBeNaN();
    expect((await go('GET', `/v1/projects/${side.id}`)).body.project.name).toBe('side');
    expect(
      (await go('POST', '/v1/projects', { project: { name: 'side', default: false } })).body.errors.name,
    ).toBeDefined();
    expect((await go('POST', '/v1/projects', { project: { name: '', default: false } })).status).toBe(422);
    expect((await go('POST', '/v1/projects', { name: 'unwrapped' })).body.errors).toHaveProperty('project');

    // ProjectUpdate: {"project": {"name"}} or {"project": {"default": true}} — never default: false.
    expect((await go('PATCH', `/v1/projects/${side.id}`, { project: { name: 'side-2' } })).body.project.name).toBe(
      'side-2',
    );
    expect((await go('PATCH', `/v1/projects/${def.id}`, { project: { default: false } })).status).toBe(422);
    expect((await go('PATCH', `/v1/projects/${side.id}`, { project: {} })).status).toBe(422);

    // Only the owner sees a project; another user gets the 404 go-scalingo prints as "The project was not found".
    const foreign = await go('GET', `/v1/projects/${side.id}`, undefined, 'other');
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ resource: 'project' });
    expect((await go('GET', '/v1/projects/prj-nope')).status).toBe(404);
    expect((await go('GET', `/v1/projects/${side.id}/private_network`)).body.resource).toBe('private_network');

    // Move an app (PUT unwrapped {"project_id"}), then the project cannot go while it has apps.
    const moved = await go('PUT', '/v1/apps/go-acct-app', { project_id: side.id });
    expect(moved.status).toBe(200);
    expect(moved.body.app.project).toEqual({ id: side.id, name: 'side-2' });
    expect((await go('PUT', '/v1/apps/go-acct-app', { project_id: 'prj-unknown' })).status).toBe(404);
    expect((await go('PUT', '/v1/apps/go-acct-app', { project_id: '' })).status).toBe(422);
    const events = await go('GET', '/v1/apps/go-acct-app/events?page=0&per_page=0');
    expect(events.body.events[0]).toMatchObject({
      type: 'update_app_project',
      type_data: { old_project_name: 'default', new_project_id: side.id, new_project_name: 'side-2' },
    });
    const refused = await go('DELETE', `/v1/projects/${side.id}`);
    expect(refused.status).toBe(422);
    expect(refused.body.errors.project[0]).toMatch(/still has applications/);
    expect((await go('DELETE', `/v1/projects/${def.id}`)).body.errors.project[0]).toMatch(/default project/);

    // Making `side` the default keeps the other apps where they were.
    expect((await go('POST', '/v1/apps', { app: { name: 'go-acct-stay' } })).status).toBe(201);
    expect((await go('PATCH', `/v1/projects/${side.id}`, { project: { default: true } })).body.project.default).toBe(
      true,
    );
    expect((await go('GET', '/v1/apps/go-acct-stay')).body.app.project.name).toBe('default');
    expect((await go('GET', `/v1/projects/${def.id}`)).body.project.default).toBe(false);

    // Creation in a project (AppsCreateOpts.ProjectID), then the project's deletion once empty.
    const created = await go('POST', '/v1/apps', { app: { name: 'go-acct-in-prj', project_id: def.id } });
    expect(created.body.app.project).toEqual({ id: def.id, name: 'default' });
    expect((await go('POST', '/v1/apps', { app: { name: 'go-acct-bad-prj', project_id: 'prj-unknown' } })).status).toBe(
      404,
    );
    expect((await go('GET', '/v1/apps/go-acct-bad-prj')).status).toBe(404);
    const extra = (await go('POST', '/v1/projects', { project: { name: 'to-delete', default: false } })).body.project;
    expect((await go('DELETE', `/v1/projects/${extra.id}`)).status).toBe(204);
    expect((await go('GET', `/v1/projects/${extra.id}`)).status).toBe(404);
    const timeline = await go('GET', '/v1/events?page=0&per_page=0');
    expect(timeline.body.events.find((e: { type: string }) => e.type === 'delete_project')).toMatchObject({
      project_id: extra.id,
      project_name: 'to-delete',
    });
  });

  it('stacks: GET /v1/features/stacks in go-scalingo Stack shape (deprecated_at null or "2006-01-02"); stacks-set PATCHes stack_id', async () => {
    const res = await go('GET', '/v1/features/stacks');
    expect(res.status).toBe(200);
    expect(res.body.stacks.length).toBeGreaterThan(0);
    for (const s of res.body.stacks) {
      expect(s).toMatchObject({
        id: expect.any(String),
        name: expect.any(String),
        description: expect.any(String),
        base_image: expect.any(String),
        default: expect.any(Boolean),
        deprecated_at: null,
      });
      expect(Date.parse(s.created_at)).not.toBeNaN();
    }
    expect(res.body.stacks.filter((s: { default: boolean }) => s.default)).toHaveLength(1);
    const target = res.body.stacks.find((s: { default: boolean }) => !s.default);
    const set = await go('PATCH', '/v1/apps/go-acct-app', { app: { stack_id: target.id } });
    expect(set.body.app.stack_id).toBe(target.id);
    expect((await go('PATCH', '/v1/apps/go-acct-app', { app: { stack_id: 'scalingo-99' } })).status).toBe(422);
    expect((await h.call('GET', '/v1/features/stacks', { as: null })).status).toBe(401);
  });

  it('deployment cache: DELETE /v1/apps/:app/caches/deployment → 204 (also with nothing cached); unknown app 404', async () => {
    const { mkdirSync, writeFileSync, existsSync } = await import('node:fs');
    const { buildCacheDir } = await import('../../src/modules/caches/build-cache.ts');
    const app = (await go('GET', '/v1/apps/go-acct-app')).body.app;
    const dir = buildCacheDir(h.emu.stateDir, app.id);
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/layer`, 'x');
    const res = await go('DELETE', '/v1/apps/go-acct-app/caches/deployment');
    expect(res.status).toBe(204);
    expect(existsSync(dir)).toBe(false);
    expect((await go('DELETE', '/v1/apps/go-acct-app/caches/deployment')).status).toBe(204);
    expect((await go('DELETE', '/v1/apps/nope-nope-app/caches/deployment')).body).toMatchObject({ resource: 'app' });
    expect((await go('DELETE', '/v1/apps/go-acct-app/caches/deployment', undefined, 'other')).status).toBe(404);
    // A stack change drops it too (the CLI's stacks-set says "Deployment cache … has been reset").
    mkdirSync(dir, { recursive: true });
    await go('PATCH', '/v1/apps/go-acct-app', { app: { stack_id: 'scalingo-22' } });
    await eventually(() => !existsSync(dir), {
      timeoutMs: 5_000,
      what: 'the build cache to go after the stack change',
    });
  });

  it('restart bodies: null (nil *AppsRestartParams), {}, empty, {"scope": null} all mean every container; malformed ones do not', async () => {
    // Never deployed: no containers, but the body is accepted and an operation is made.
    for (const raw of ['null', '{}', '', '{"scope":null}']) {
      const res = await h.call('POST', '/v1/apps/go-acct-app/restart', { as: { bearer }, headers: GO_HEADERS, raw });
      expect(res.status, raw).toBe(202);
      expect(res.headers.get('location'), raw).toMatch(/\/operations\//);
    }
    const events = await go('GET', '/v1/apps/go-acct-app/events?page=0&per_page=0');
    const restarts = events.body.events.filter((e: { type: string }) => e.type === 'restart');
    expect(restarts.map((e: { type_data: { scope: unknown } }) => e.type_data.scope)).toEqual([null, null, null, null]);
    expect(
      (
        await h.call('POST', '/v1/apps/go-acct-app/restart', {
          as: { bearer },
          headers: GO_HEADERS,
          raw: '{"scope": 3}',
        })
      ).status,
    ).toBe(422);
    expect(
      (await h.call('POST', '/v1/apps/go-acct-app/restart', { as: { bearer }, headers: GO_HEADERS, raw: '[1]' }))
        .status,
    ).toBe(422);
    expect(
      (await h.call('POST', '/v1/apps/go-acct-app/restart', { as: { bearer }, headers: GO_HEADERS, raw: '{"scope":' }))
        .status,
    ).toBe(400);
  });

  it('account surface of an account with none: SCM integrations, repo links, review apps, private network names, invoices, databases', async () => {
    expect((await go('GET', '/v1/scm_integrations')).body).toEqual({ scm_integrations: [] });
    expect((await go('GET', '/v1/scm_integrations/abc')).body).toMatchObject({ resource: 'scm_integration' });
    const addIntegration = await go('POST', '/v1/scm_integrations', {
      scm_integration: { scm_type: 'gitlab-self-hosted', url: 'https://gitlab.example.test', access_token: 't' },
    });
    expect(addIntegration.status).toBe(400);
    expect(addIntegration.body.error).toMatch(/emulator does not provide SCM integrations/);
    expect((await go('GET', '/v1/scm_repo_links?page=1&per_page=20')).body).toMatchObject({
      scm_repo_links: [],
      meta: { pagination: { current_page: 1, total_count: 0 } },
    });

    // No link: the 404 the CLI turns into "Your app '…' has no integration link."
    const link = await go('GET', '/v1/apps/go-acct-app/scm_repo_link');
    expect(link.status).toBe(404);
    expect(link.body).toMatchObject({ resource: 'scm_repo_link' });
    expect((await go('GET', '/v1/apps/go-acct-app/scm_repo_link/review_apps')).body).toEqual({ review_apps: [] });
    expect((await go('GET', '/v1/apps/go-acct-app/scm_repo_link/deployments')).status).toBe(404);
    expect((await go('POST', '/v1/apps/go-acct-app/scm_repo_link/manual_deploy', { branch: 'main' })).status).toBe(404);
    const createLink = await go('POST', '/v1/apps/go-acct-app/scm_repo_link', {
      scm_repo_link: { source: 'https://github.com/a/b', branch: 'main', auth_integration_uuid: 'x' },
    });
    expect(createLink.status).toBe(400);
    expect(createLink.body.error).toMatch(/emulator does not provide/);
    expect((await go('GET', '/v1/apps/nope-nope-app/scm_repo_link')).body.resource).toBe('app');

    // PrivateNetworksDomainsList: paginated {domain_names: {data, meta}}; page ≥ 1, 1 ≤ per_page ≤ 50.
    const names = await go('GET', '/v1/apps/go-acct-app/private_network_domain_names?page=1&per_page=20');
    expect(names.body).toEqual({
      domain_names: {
        data: [],
        meta: { current_page: 1, per_page: 20, prev_page: 0, next_page: 0, total_pages: 1, total_count: 0 },
      },
    });
    expect(
      (await go('GET', '/v1/apps/go-acct-app/private_network_domain_names?page=0&per_page=20')).body.errors,
    ).toHaveProperty('page');
    expect(
      (await go('GET', '/v1/apps/go-acct-app/private_network_domain_names?page=1&per_page=51')).body.errors,
    ).toHaveProperty('per_page');
    expect(
      (await go('GET', '/v1/apps/go-acct-app/private_network_domain_names?page=1&per_page=20', undefined, 'other'))
        .status,
    ).toBe(404);

    expect((await go('GET', '/v1/account/invoices?page=1&per_page=20')).body).toMatchObject({
      invoices: [],
      meta: { pagination: { total_count: 0 } },
    });
    expect((await go('GET', '/v1/account/invoices/inv-1')).body).toMatchObject({ resource: 'invoice' });
    expect((await go('GET', '/v1/databases')).body).toEqual({ databases: [] });
    // A technology that is not a dedicated database's: 422 on addon_provider_id (test/docker/dedicated-databases.test.ts makes one).
    const db = await go('POST', '/v1/databases', { addon_provider_id: 'postgresql', plan_id: 'x', name: 'my-db-app' });
    expect(db.status).toBe(422);
    expect(db.body.errors.addon_provider_id[0]).toMatch(/not a dedicated database technology.*postgresql-ng/);
    for (const path of ['/v1/projects', '/v1/scm_integrations', '/v1/account/invoices', '/v1/databases'])
      expect((await h.call('GET', path, { as: null })).status, path).toBe(401);
  });

  it('Terraform provider: app creation without environment sends {"variables": null} → 200, nothing changes', async () => {
    const res = await go('PUT', '/v1/apps/go-acct-app/variables', { variables: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ variables: [] });
    expect((await go('PUT', '/v1/apps/go-acct-app/variables', {})).status).toBe(422);
    expect((await go('GET', '/v1/apps/go-acct-app/events?page=0&per_page=0')).body.events[0].type).not.toBe(
      'edit_variables',
    );
  });
});
