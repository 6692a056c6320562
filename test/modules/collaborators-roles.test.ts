import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';

// PATCH /v1/apps/:app/collaborators/:id (go-scalingo CollaboratorUpdate) and what the Limited
// Collaborator role may not do (doc.scalingo.com/platform/user-management/teamwork/roles).
describe('collaborator roles', () => {
  let h: Harness;
  let id = '';
  beforeAll(async () => {
    h = await startEmulator();
    await h.call('POST', '/v1/apps', { body: { app: { name: 'roles-app' } } });
    id = (
      await h.call('POST', '/v1/apps/roles-app/collaborators', {
        body: { collaborator: { email: 'other@example.test', is_limited: false } },
      })
    ).body.collaborator.id;
  });
  afterAll(() => h.stop());
  const patch = (body: unknown, as: 'dev' | 'other' = 'dev', cid = id) =>
    h.call('PATCH', `/v1/apps/roles-app/collaborators/${cid}`, { body, as });

  it('the owner changes the role; the list and the event say it', async () => {
    const res = await patch({ collaborator: { is_limited: true } });
    expect(res.status).toBe(200);
    expect(res.body.collaborator).toMatchObject({
      id,
      email: 'other@example.test',
      status: 'accepted',
      is_limited: true,
    });
    expect((await h.call('GET', '/v1/apps/roles-app/collaborators')).body.collaborators[0].is_limited).toBe(true);
    const ev = (await h.call('GET', '/v1/apps/roles-app/events')).body.events[0];
    expect(ev).toMatchObject({
      type: 'change_collaborator_role',
      user: { username: 'dev' },
      type_data: {
        collaborator: {
          username: 'other',
          email: 'other@example.test',
          is_limited: true,
          inviter: { username: 'dev' },
        },
      },
    });
    // Same role again: no new event.
    await patch({ collaborator: { is_limited: true } });
    expect((await h.call('GET', '/v1/apps/roles-app/events')).body.events[0].id).toBe(ev.id);
  });

  it('refuses non-owners, unknown collaborators and bad bodies', async () => {
    expect((await patch({ collaborator: { is_limited: false } }, 'other')).status).toBe(403);
    expect((await patch({ collaborator: { is_limited: true } }, 'dev', 'nope')).body).toEqual({
      resource: 'collaborator',
      error: 'not found',
    });
    expect((await patch({ collaborator: { is_limited: 'yes' } })).body).toEqual({
      errors: { is_limited: ['must be a boolean'] },
    });
    expect((await patch({ is_limited: true })).body).toEqual({ errors: { collaborator: ['missing field'] } });
    expect(
      (
        await h.call('PATCH', `/v1/apps/roles-app/collaborators/${id}`, {
          raw: '{',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await h.call('PATCH', `/v1/apps/roles-app/collaborators/${id}`, {
          body: { collaborator: { is_limited: true } },
          as: 'trial',
        })
      ).status,
    ).toBe(404);
  });

  it('a limited collaborator reads the app, logs, events and restarts, but no variables, settings, scaling, deployments or one-offs', async () => {
    const as = 'other' as const;
    expect((await h.call('GET', '/v1/apps/roles-app', { as })).status).toBe(200);
    expect((await h.call('GET', '/v1/apps/roles-app/events', { as })).status).toBe(200);
    expect((await h.call('GET', '/v1/apps/roles-app/logs', { as })).status).toBe(200);
    expect((await h.call('GET', '/v1/apps/roles-app/containers', { as })).status).toBe(200);
    const refused = [
      await h.call('GET', '/v1/apps/roles-app/variables', { as }),
      await h.call('POST', '/v1/apps/roles-app/variables', { as, body: { variable: { name: 'A', value: 'b' } } }),
      await h.call('PUT', '/v1/apps/roles-app', { as, body: { force_https: true } }),
      await h.call('POST', '/v1/apps/roles-app/scale', { as, body: { containers: [{ name: 'web', amount: 2 }] } }),
      await h.call('POST', '/v1/apps/roles-app/deployments', {
        as,
        body: { deployment: { source_url: 'https://example.com/a.tar.gz' } },
      }),
      await h.call('POST', '/v1/apps/roles-app/run', { as, body: { command: 'sh', detached: true } }),
      await h.call('POST', '/v1/apps/roles-app/collaborators', {
        as,
        body: { collaborator: { email: 'trial@example.test' } },
      }),
    ];
    for (const r of refused) expect(r.status, r.text).toBe(403);
    expect(refused[0].body.error).toBe(
      'a limited collaborator cannot read or change environment variables: ask the owner or a full collaborator of the app',
    );
    // Back to full collaborator: allowed again.
    await patch({ collaborator: { is_limited: false } });
    expect((await h.call('GET', '/v1/apps/roles-app/variables', { as })).status).toBe(200);
  });
});
