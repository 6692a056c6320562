import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';

// GET /v1/apps/:app answers from a cache (src/modules/apps/app-answer-cache.ts): every kind of write that
// changes what it shows, or who may see it, must show in the very next GET.
describe('GET /v1/apps/:app after each kind of write', () => {
  let h: Harness;
  const get = async (name: string, as: 'dev' | 'other' = 'dev') => {
    const res = await h.call('GET', `/v1/apps/${name}`, { as });
    return res.status === 200 ? res.body.app : res.status;
  };
  // A read twice first: the second is the cached one, which the write must not leave standing.
  const warm = async (name: string, as: 'dev' | 'other' = 'dev') => {
    const first = await get(name, as);
    expect(await get(name, as)).toEqual(first);
    return first;
  };
  beforeAll(async () => {
    h = await startEmulator();
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'cached-app' } } })).status).toBe(201);
  });
  afterAll(() => h.stop());

  it('settings (PUT unwrapped, as the Go client sends them)', async () => {
    expect((await warm('cached-app')).force_https).toBe(false);
    expect((await h.call('PUT', '/v1/apps/cached-app', { body: { force_https: true } })).status).toBe(200);
    expect((await get('cached-app')).force_https).toBe(true);
  });

  it('status and last deployment (written by the containers and deployments areas)', async () => {
    const before = await warm('cached-app');
    const apps = h.emu.area('apps').apps;
    apps.setStatus(before.id, 'running');
    expect((await get('cached-app')).status).toBe('running');
    apps.store.markDeployed(before.id, Date.parse('2026-01-02T03:04:05Z'), 'dev', 'dep-1');
    expect(await get('cached-app')).toMatchObject({ last_deployed_by: 'dev', last_deployment_id: 'dep-1' });
  });

  it("the owner's own row (users are written at start and by the control plane's reset and restore: syncUsers)", async () => {
    expect((await warm('cached-app')).owner.email).toBe('dev@example.test');
    const auth = h.emu.area('accounts').auth;
    const withEmail = (email: string) => h.emu.config.users.map((u) => (u.username === 'dev' ? { ...u, email } : u));
    auth.syncUsers(withEmail('dev2@example.test'));
    try {
      expect((await get('cached-app')).owner.email).toBe('dev2@example.test');
    } finally {
      auth.syncUsers(withEmail('dev@example.test'));
    }
    expect((await get('cached-app')).owner.email).toBe('dev@example.test');
  });

  it('projects: the app moved to another, then that project renamed', async () => {
    const before = await warm('cached-app');
    const created = await h.call('POST', '/v1/projects', { body: { project: { name: 'cache-proj' } } });
    expect(created.status).toBe(201);
    const id = created.body.project.id;
    expect((await h.call('PUT', '/v1/apps/cached-app', { body: { app: { project_id: id } } })).status).toBe(200);
    const moved = await get('cached-app');
    expect(moved.project).toEqual({ id, name: 'cache-proj' });
    expect(moved.project).not.toEqual(before.project);
    await warm('cached-app');
    expect((await h.call('PATCH', `/v1/projects/${id}`, { body: { project: { name: 'cache-proj-2' } } })).status).toBe(
      200,
    );
    expect((await get('cached-app')).project).toEqual({ id, name: 'cache-proj-2' });
  });

  it('collaborators: access given, then taken away', async () => {
    expect(await warm('cached-app', 'other')).toBe(404);
    const invited = await h.call('POST', '/v1/apps/cached-app/collaborators', {
      body: { collaborator: { email: 'other@example.test' } },
    });
    expect(invited.status).toBe(201);
    expect((await warm('cached-app', 'other')).name).toBe('cached-app');
    const removed = await h.call('DELETE', `/v1/apps/cached-app/collaborators/${invited.body.collaborator.id}`);
    expect(removed.status).toBe(204);
    expect(await get('cached-app', 'other')).toBe(404);
  });

  it('rename: the old name is a 404, the new one answers', async () => {
    const before = await warm('cached-app');
    const renamed = await h.call('POST', '/v1/apps/cached-app/rename', {
      body: { current_name: 'cached-app', new_name: 'cached-app-2' },
    });
    expect(renamed.status).toBe(200);
    expect(await get('cached-app')).toBe(404);
    expect((await get(before.id)).name).toBe('cached-app-2');
    expect((await get('cached-app-2')).git_url).toContain('cached-app-2');
  });

  it('transfer: the owner changes for the old owner, who stays a collaborator', async () => {
    await h.call('POST', '/v1/apps/cached-app-2/collaborators', {
      body: { collaborator: { email: 'other@example.test' } },
    });
    expect((await warm('cached-app-2')).owner.username).toBe('dev');
    expect((await warm('cached-app-2', 'other')).owner.username).toBe('dev');
    const res = await h.call('PATCH', '/v1/apps/cached-app-2', { body: { app: { owner: 'other@example.test' } } });
    expect(res.status).toBe(200);
    expect((await get('cached-app-2')).owner.username).toBe('other');
    expect((await get('cached-app-2', 'other')).owner.username).toBe('other');
  });

  it('delete: a 404 at once', async () => {
    await warm('cached-app-2', 'other');
    const res = await h.call('DELETE', '/v1/apps/cached-app-2?current_name=cached-app-2', { as: 'other' });
    expect(res.status).toBe(204);
    expect(await get('cached-app-2', 'other')).toBe(404);
    expect(await get('cached-app-2')).toBe(404);
  });

  it('the answer is the same bytes and headers as an uncached view of the app', async () => {
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'cached-app-3' } } })).status).toBe(201);
    const first = await h.call('GET', '/v1/apps/cached-app-3');
    const second = await h.call('GET', '/v1/apps/cached-app-3');
    expect(second.text).toBe(first.text);
    expect(second.headers.get('content-type')).toBe('application/json');
    const renamed = await h.call('POST', '/v1/apps/cached-app-3/rename', {
      body: { current_name: 'cached-app-3', new_name: 'cached-app-3' },
    });
    expect(JSON.parse(second.text).app).toEqual({ ...renamed.body.app, updated_at: first.body.app.updated_at });
  });
});
