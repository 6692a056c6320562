import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator, TEST_USERS } from '../harness.ts';

describe('collaborators', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startEmulator({
      users: [
        ...TEST_USERS,
        {
          username: 'late',
          email: 'late@example.test',
          password: 'late-password',
          apiTokens: ['tk-us-test-late-00000000000000000'],
        },
      ],
    });
    await h.call('POST', '/v1/apps', { body: { app: { name: 'team-app' } } });
  });
  afterAll(() => h.stop());

  it('an invitation to a known user is accepted at once', async () => {
    const res = await h.call('POST', '/v1/apps/team-app/collaborators', {
      body: { collaborator: { email: 'other@example.test', is_limited: false } },
    });
    expect(res.status).toBe(201);
    expect(res.body.collaborator).toMatchObject({
      email: 'other@example.test',
      username: 'other',
      status: 'accepted',
      is_limited: false,
      invitation_link: expect.stringContaining('/v1/apps/collaboration?token='),
    });
    const list = await h.call('GET', '/v1/apps/team-app/collaborators', { as: 'other' });
    expect(list.body.collaborators).toEqual([
      expect.objectContaining({ email: 'other@example.test', status: 'accepted' }),
    ]);
  });

  it('an invitation to an unknown e-mail stays pending until its link is opened', async () => {
    const res = await h.call('POST', '/v1/apps/team-app/collaborators', {
      body: { collaborator: { email: 'newcomer@example.test' } },
    });
    expect(res.body.collaborator).toMatchObject({ status: 'pending', username: 'n/a' });
    const link = new URL(res.body.collaborator.invitation_link);
    expect((await h.call('GET', '/v1/apps/team-app', { as: 'trial' })).status).toBe(404);
    const accepted = await h.call('GET', `${link.pathname}${link.search}`, { as: 'trial' });
    expect(accepted.status).toBe(200);
    expect(accepted.body.name).toBe('team-app'); // the bare app object
    expect((await h.call('GET', '/v1/apps/team-app', { as: 'trial' })).status).toBe(200);
  });

  it('refuses duplicates, the owner, bad e-mails, unknown tokens; only the owner manages', async () => {
    expect(
      (
        await h.call('POST', '/v1/apps/team-app/collaborators', {
          body: { collaborator: { email: 'other@example.test' } },
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await h.call('POST', '/v1/apps/team-app/collaborators', {
          body: { collaborator: { email: 'dev@example.test' } },
        })
      ).body.errors,
    ).toHaveProperty('email');
    expect(
      (await h.call('POST', '/v1/apps/team-app/collaborators', { body: { collaborator: { email: 'nope' } } })).body,
    ).toEqual({ errors: { email: ['is not a valid e-mail address'] } });
    expect((await h.call('POST', '/v1/apps/team-app/collaborators', { body: {} })).body).toEqual({
      errors: { collaborator: ['missing field'] },
    });
    expect((await h.call('GET', '/v1/apps/collaboration?token=nope')).status).toBe(404);
    expect((await h.call('GET', '/v1/apps/collaboration')).status).toBe(422);
    expect(
      (
        await h.call('POST', '/v1/apps/team-app/collaborators', {
          as: 'other',
          body: { collaborator: { email: 'late@example.test' } },
        })
      ).status,
    ).toBe(403);
  });

  it('removing a collaborator takes the app away from them', async () => {
    const list = await h.call('GET', '/v1/apps/team-app/collaborators');
    const other = list.body.collaborators.find((c: { email: string }) => c.email === 'other@example.test');
    expect((await h.call('DELETE', `/v1/apps/team-app/collaborators/${other.id}`, { as: 'other' })).status).toBe(403);
    expect((await h.call('DELETE', `/v1/apps/team-app/collaborators/${other.id}`)).status).toBe(204);
    expect((await h.call('GET', '/v1/apps/team-app', { as: 'other' })).status).toBe(404);
    expect((await h.call('DELETE', `/v1/apps/team-app/collaborators/${other.id}`)).body).toEqual({
      resource: 'collaborator',
      error: 'not found',
    });
  });
});
