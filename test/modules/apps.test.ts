import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$/;

describe('apps API #1–#9', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startEmulator();
  });
  afterEach(() => h.stop());

  const create = (name: string, as: 'dev' | 'other' | 'trial' = 'dev', extra: Record<string, unknown> = {}) =>
    h.call('POST', '/v1/apps', { as, body: { app: { name, ...extra } } });

  describe('#1 create', () => {
    it('creates an app with every field of the resource', async () => {
      const res = await create('my-app-1');
      expect(res.status).toBe(201);
      const app = res.body.app;
      expect(app).toMatchObject({
        name: 'my-app-1',
        status: 'new',
        force_https: false,
        sticky_session: false,
        router_logs: false,
        stack_id: 'scalingo-22',
        last_deployed_at: null,
        last_deployment_id: null,
        owner: { username: 'dev', email: 'dev@example.test', id: expect.stringMatching(/^us-/) },
        flags: { 'sticky-session': false },
      });
      expect(app.id).toMatch(/^[0-9a-f]{24}$/);
      expect(app.created_at).toMatch(ISO);
      expect(app.updated_at).toMatch(ISO);
      expect(app.url).toBe(`http://my-app-1.localhost:${h.emu.urls.routerPort}`);
      expect(app.base_url).toBe(app.url);
      expect(app.git_url).toContain('my-app-1');
      expect(app.links.deployments_stream).toMatch(/^ws:\/\//);
      expect(app.data_access_consent).toEqual({
        app_id: app.id,
        user_id: app.owner.id,
        containers_until: null,
        database_until: null,
      });
      expect(app).not.toHaveProperty('limits'); // only when an operator set one
    });

    it("answers 201 as JSON with one X-Request-ID (the client's when it sent one), a dry run too", async () => {
      const res = await h.call('POST', '/v1/apps', {
        body: { app: { name: 'with-request-id' } },
        headers: { 'x-request-id': 'client-id-201' },
      });
      expect(res.status).toBe(201);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('x-request-id')).toBe('client-id-201'); // fetch would join two with ", "
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(res.text)));
      expect(res.body.app.name).toBe('with-request-id');
      const dry = await h.call('POST', '/v1/apps', {
        body: { app: { name: 'dry-run-app' } },
        headers: { 'x-dry-run': 'true' },
      });
      expect(dry.status).toBe(201);
      expect(dry.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(dry.body.app.name).toBe('dry-run-app');
      expect((await h.call('GET', '/v1/apps/dry-run-app')).status).toBe(404);
    });

    it('accepts stack_id and git_source', async () => {
      const res = await create('with-stack', 'dev', { stack_id: 'scalingo-20', git_source: 'file:///tmp/repo' });
      expect(res.status).toBe(201);
      expect(res.body.app.stack_id).toBe('scalingo-20');
      const unknown = await create('bad-stack', 'dev', { stack_id: 'scalingo-99' });
      expect(unknown.status).toBe(422);
      expect(Object.keys(unknown.body.errors)).toEqual(['stack_id']);
    });

    it.each([
      ['short', 'is too short (minimum is 6 characters)'],
      ['a'.repeat(49), 'is too long (maximum is 48 characters)'],
      ['My-App-Upper', 'is invalid: use lower case letters, digits and hyphens only'],
      ['my_app_underscore', 'is invalid: use lower case letters, digits and hyphens only'],
      ['-leading', 'is invalid: it cannot start or end with a hyphen'],
      ['trailing-', 'is invalid: it cannot start or end with a hyphen'],
      ['double--hyphen', 'is invalid: it cannot contain two hyphens in a row'],
    ])('refuses the name %j with 422 naming the field', async (name, message) => {
      const res = await create(name);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ errors: { name: [message] } });
      expect((await h.call('GET', '/v1/apps')).body.apps).toEqual([]);
    });

    it('accepts names at the limits (6 and 48 characters)', async () => {
      expect((await create('abcdef')).status).toBe(201);
      expect((await create('a'.repeat(48))).status).toBe(201);
    });

    it('422 for missing or mistyped fields', async () => {
      expect((await h.call('POST', '/v1/apps', { body: {} })).body).toEqual({ errors: { app: ['missing field'] } });
      expect((await h.call('POST', '/v1/apps', { body: { app: 'x' } })).body).toEqual({
        errors: { app: ['missing field'] },
      });
      expect((await h.call('POST', '/v1/apps', { body: { app: {} } })).body).toEqual({
        errors: { name: ['missing field'] },
      });
      expect((await h.call('POST', '/v1/apps', { body: { app: { name: 42 } } })).body).toEqual({
        errors: { name: ['must be a string'] },
      });
    });

    it('422 when the name is taken, even by another user', async () => {
      await create('taken-name', 'other');
      const res = await create('taken-name');
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ errors: { name: ['has already been taken'] } });
    });

    it('X-Dry-Run: true validates, answers like a creation, and creates nothing', async () => {
      const dry = await h.call('POST', '/v1/apps', {
        body: { app: { name: 'dry-run-app' } },
        headers: { 'X-Dry-Run': 'true' },
      });
      expect(dry.status).toBe(201);
      expect(dry.body.app.name).toBe('dry-run-app');
      expect((await h.call('GET', '/v1/apps/dry-run-app')).status).toBe(404);
      expect((await h.call('GET', '/v1/events')).body.events).toEqual([]);
      const dryBad = await h.call('POST', '/v1/apps', {
        body: { app: { name: 'BAD' } },
        headers: { 'X-Dry-Run': 'true' },
      });
      expect(dryBad.status).toBe(422);
    });

    it('402 {error, url} for a second app without a payment method', async () => {
      expect((await create('trial-app-1', 'trial')).status).toBe(201);
      const res = await create('trial-app-2', 'trial');
      expect(res.status).toBe(402);
      expect(res.body).toEqual({ error: expect.stringMatching(/payment card/), url: `${h.api}/_emulator/billing` });
      expect((await h.call('GET', '/v1/apps', { as: 'trial' })).body.apps).toHaveLength(1);
      // The dry run tells the same.
      expect(
        (
          await h.call('POST', '/v1/apps', {
            as: 'trial',
            body: { app: { name: 'trial-app-3' } },
            headers: { 'X-Dry-Run': 'true' },
          })
        ).status,
      ).toBe(402);
      const page = await fetch(res.body.url);
      expect(page.status).toBe(200);
    });
  });

  describe('#2 list, #3 show', () => {
    it('lists owned and collaborated apps, never others', async () => {
      await create('mine-app-1');
      await create('theirs-app', 'other');
      await create('shared-app', 'other');
      expect(
        (
          await h.call('POST', '/v1/apps/shared-app/collaborators', {
            as: 'other',
            body: { collaborator: { email: 'dev@example.test' } },
          })
        ).status,
      ).toBe(201);
      const list = await h.call('GET', '/v1/apps');
      expect(list.status).toBe(200);
      expect(list.body.apps.map((a: { name: string }) => a.name).sort()).toEqual(['mine-app-1', 'shared-app']);
      // The CLI's `apps` table prints STATUS from the list (go-scalingo App.Status).
      expect(list.body.apps[0].status).toBe('new');
    });

    it('shows by name or id, with status; another user’s app is a 404', async () => {
      const { body } = await create('show-me-app');
      const byName = await h.call('GET', '/v1/apps/show-me-app');
      expect(byName.body.app).toMatchObject({ id: body.app.id, status: 'new' });
      expect((await h.call('GET', `/v1/apps/${body.app.id}`)).body.app.name).toBe('show-me-app');
      const other = await h.call('GET', '/v1/apps/show-me-app', { as: 'other' });
      expect(other.status).toBe(404);
      expect(other.body).toEqual({ resource: 'app', error: 'not found' });
      expect((await h.call('GET', '/v1/apps/does-not-exist')).body).toEqual({ resource: 'app', error: 'not found' });
    });
  });

  describe('#4 delete', () => {
    it('needs the matching current_name', async () => {
      await create('delete-me');
      const none = await h.call('DELETE', '/v1/apps/delete-me');
      expect(none.status).toBe(422);
      expect(Object.keys(none.body.errors)).toEqual(['current_name']);
      const wrong = await h.call('DELETE', '/v1/apps/delete-me?current_name=other-name');
      expect(wrong.status).toBe(422);
      expect(wrong.body.errors.current_name[0]).toMatch(/does not match/);
      expect((await h.call('GET', '/v1/apps/delete-me')).status).toBe(200);
      const ok = await h.call('DELETE', '/v1/apps/delete-me?current_name=delete-me');
      expect(ok.status).toBe(204);
      expect(ok.text).toBe('');
      expect((await h.call('GET', '/v1/apps/delete-me')).status).toBe(404);
    });

    it("answers 204 with one X-Request-ID (the client's when it sent one), no body and no Content-Type", async () => {
      for (const [name, sent] of [
        ['delete-with-id', 'client-id-204'],
        ['delete-no-id', undefined],
      ] as const) {
        await create(name);
        const res = await h.call('DELETE', `/v1/apps/${name}?current_name=${name}`, {
          headers: sent ? { 'x-request-id': sent } : {},
        });
        expect(res.status).toBe(204);
        expect(res.text).toBe('');
        expect(res.headers.get('content-type')).toBeNull();
        // fetch would join two with ", "
        expect(res.headers.get('x-request-id')).toMatch(sent ? /^client-id-204$/ : /^[0-9a-f-]{36}$/);
      }
    });

    it('404 for unknown or foreign apps; collaborators cannot delete', async () => {
      expect((await h.call('DELETE', '/v1/apps/nope-app?current_name=nope-app')).status).toBe(404);
      await create('foreign-app', 'other');
      expect((await h.call('DELETE', '/v1/apps/foreign-app?current_name=foreign-app')).status).toBe(404);
      await h.call('POST', '/v1/apps/foreign-app/collaborators', {
        as: 'other',
        body: { collaborator: { email: 'dev@example.test' } },
      });
      const res = await h.call('DELETE', '/v1/apps/foreign-app?current_name=foreign-app');
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/owner/);
    });
  });

  describe('#5 rename', () => {
    it('renames when current_name matches', async () => {
      await create('old-name-app');
      const res = await h.call('POST', '/v1/apps/old-name-app/rename', {
        body: { current_name: 'old-name-app', new_name: 'new-name-app' },
      });
      expect(res.status).toBe(200);
      expect(res.body.app.name).toBe('new-name-app');
      expect(res.body.app.url).toContain('new-name-app.localhost');
      expect((await h.call('GET', '/v1/apps/old-name-app')).status).toBe(404);
      expect((await h.call('GET', '/v1/apps/new-name-app')).status).toBe(200);
    });

    it('refuses a wrong current_name, an invalid or taken new name, and unknown apps', async () => {
      await create('rename-src');
      await create('rename-taken');
      expect(
        (await h.call('POST', '/v1/apps/rename-src/rename', { body: { current_name: 'nope', new_name: 'fine-name' } }))
          .body.errors,
      ).toHaveProperty('current_name');
      expect(
        (await h.call('POST', '/v1/apps/rename-src/rename', { body: { current_name: 'rename-src', new_name: 'Bad' } }))
          .body.errors,
      ).toHaveProperty('new_name');
      expect(
        (
          await h.call('POST', '/v1/apps/rename-src/rename', {
            body: { current_name: 'rename-src', new_name: 'rename-taken' },
          })
        ).body,
      ).toEqual({ errors: { name: ['has already been taken'] } });
      expect((await h.call('POST', '/v1/apps/rename-src/rename', { body: {} })).body.errors).toEqual({
        current_name: ['missing field'],
        new_name: ['missing field'],
      });
      expect(
        (
          await h.call('POST', '/v1/apps/unknown-app/rename', {
            body: { current_name: 'unknown-app', new_name: 'fine-name' },
          })
        ).status,
      ).toBe(404);
      expect(
        (
          await h.call('POST', '/v1/apps/rename-src/rename', {
            raw: '{"current_name":',
            headers: { 'content-type': 'application/json' },
          })
        ).status,
      ).toBe(400);
    });
  });

  describe('#6 transfer', () => {
    it('transfers to a collaborator; the old owner stays a collaborator', async () => {
      await create('transfer-me');
      expect(
        (
          await h.call('POST', '/v1/apps/transfer-me/collaborators', {
            body: { collaborator: { email: 'other@example.test' } },
          })
        ).status,
      ).toBe(201);
      const res = await h.call('PATCH', '/v1/apps/transfer-me?current_name=transfer-me', {
        body: { app: { owner: 'other@example.test' } },
      });
      expect(res.status).toBe(200);
      expect(res.body.app.owner.username).toBe('other');
      expect((await h.call('GET', '/v1/apps/transfer-me', { as: 'other' })).status).toBe(200);
      expect((await h.call('GET', '/v1/apps/transfer-me')).status).toBe(200); // still a collaborator
      expect((await h.call('DELETE', '/v1/apps/transfer-me?current_name=transfer-me')).status).toBe(403);
    });

    it('refuses a non-collaborator, an unknown user, a wrong current_name, a bad e-mail', async () => {
      await create('keep-me-app');
      const notCollab = await h.call('PATCH', '/v1/apps/keep-me-app?current_name=keep-me-app', {
        body: { app: { owner: 'other@example.test' } },
      });
      expect(notCollab.status).toBe(422);
      expect(notCollab.body).toEqual({ errors: { owner: ['should be part of the collaborators of the app'] } });
      expect(
        (await h.call('PATCH', '/v1/apps/keep-me-app', { body: { app: { owner: 'ghost@example.test' } } })).status,
      ).toBe(422);
      await h.call('POST', '/v1/apps/keep-me-app/collaborators', {
        body: { collaborator: { email: 'other@example.test' } },
      });
      const wrong = await h.call('PATCH', '/v1/apps/keep-me-app?current_name=wrong-name', {
        body: { app: { owner: 'other@example.test' } },
      });
      expect(wrong.status).toBe(422);
      expect(wrong.body.errors).toHaveProperty('current_name');
      expect(
        (await h.call('PATCH', '/v1/apps/keep-me-app', { body: { app: { owner: 'not-an-email' } } })).body.errors,
      ).toHaveProperty('owner');
      expect((await h.call('GET', '/v1/apps/keep-me-app')).body.app.owner.username).toBe('dev');
    });

    it('402 when the new owner has no payment method and already owns an app', async () => {
      await create('trial-own-app', 'trial');
      await create('gift-app');
      await h.call('POST', '/v1/apps/gift-app/collaborators', {
        body: { collaborator: { email: 'trial@example.test' } },
      });
      expect(
        (await h.call('PATCH', '/v1/apps/gift-app', { body: { app: { owner: 'trial@example.test' } } })).status,
      ).toBe(402);
    });
  });

  describe('#7 settings', () => {
    it('updates force_https, sticky_session, router_logs and stack_id with PATCH {app}', async () => {
      await create('settings-app');
      const res = await h.call('PATCH', '/v1/apps/settings-app', {
        body: { app: { force_https: true, sticky_session: true, router_logs: true, stack_id: 'scalingo-24' } },
      });
      expect(res.status).toBe(200);
      expect(res.body.app).toMatchObject({
        force_https: true,
        sticky_session: true,
        router_logs: true,
        stack_id: 'scalingo-24',
        flags: { 'sticky-session': true },
      });
      expect((await h.call('GET', '/v1/apps/settings-app')).body.app.force_https).toBe(true);
    });

    it('accepts the Go client form: PUT with an unwrapped body', async () => {
      await create('settings-go');
      const res = await h.call('PUT', '/v1/apps/settings-go', { body: { router_logs: true } });
      expect(res.status).toBe(200);
      expect(res.body.app.router_logs).toBe(true);
      expect(res.body.app.force_https).toBe(false);
    });

    it('422 for mistyped values or an unknown stack; 404 for others’ apps', async () => {
      await create('settings-bad');
      expect((await h.call('PATCH', '/v1/apps/settings-bad', { body: { app: { force_https: 'yes' } } })).body).toEqual({
        errors: { force_https: ['must be a boolean'] },
      });
      expect(
        (await h.call('PATCH', '/v1/apps/settings-bad', { body: { app: { stack_id: 'nope' } } })).body.errors,
      ).toHaveProperty('stack_id');
      expect(
        (await h.call('PATCH', '/v1/apps/settings-bad', { as: 'other', body: { app: { force_https: true } } })).status,
      ).toBe(404);
    });
  });

  describe('#8–#9 child apps', () => {
    it('creates a child app with parent_app_name, status, git_source, flags, limits', async () => {
      await create('parent-app', 'dev', { git_source: 'file:///src/repo' });
      await h.call('PATCH', '/v1/apps/parent-app', { body: { app: { force_https: true } } });
      const res = await h.call('POST', '/v1/apps/parent-app/child_apps', { body: { app: { name: 'parent-app-pr1' } } });
      expect(res.status).toBe(201);
      expect(res.body.app).toMatchObject({
        name: 'parent-app-pr1',
        parent_app_name: 'parent-app',
        status: 'new',
        git_source: 'file:///src/repo',
        limits: {},
        force_https: true,
        flags: expect.any(Object),
      });
      expect((await h.call('GET', '/v1/apps/parent-app-pr1')).body.app.parent_app_name).toBe('parent-app');
    });

    it('child names are 6–32 characters', async () => {
      await create('parent-two');
      const res = await h.call('POST', '/v1/apps/parent-two/child_apps', { body: { app: { name: 'c'.repeat(33) } } });
      expect(res.body).toEqual({ errors: { name: ['is too long (maximum is 32 characters)'] } });
      expect((await h.call('POST', '/v1/apps/parent-two/child_apps', { body: {} })).body).toEqual({
        errors: { app: ['missing field'] },
      });
      expect(
        (await h.call('POST', '/v1/apps/nope-parent/child_apps', { body: { app: { name: 'child-name' } } })).status,
      ).toBe(404);
    });

    it('lists children with meta.pagination', async () => {
      await create('parent-many');
      for (let i = 1; i <= 5; i++)
        await h.call('POST', '/v1/apps/parent-many/child_apps', { body: { app: { name: `child-many-${i}` } } });
      const p1 = await h.call('GET', '/v1/apps/parent-many/child_apps?page=1&per_page=2');
      expect(p1.status).toBe(200);
      expect(p1.body.child_apps.map((a: { name: string }) => a.name)).toEqual(['child-many-1', 'child-many-2']);
      expect(p1.body.meta.pagination).toEqual({
        prev_page: null,
        current_page: 1,
        next_page: 2,
        total_pages: 3,
        total_count: 5,
      });
      const p3 = await h.call('GET', '/v1/apps/parent-many/child_apps?page=3&per_page=2');
      expect(p3.body.child_apps.map((a: { name: string }) => a.name)).toEqual(['child-many-5']);
      expect(p3.body.meta.pagination).toEqual({
        prev_page: 2,
        current_page: 3,
        next_page: null,
        total_pages: 3,
        total_count: 5,
      });
      expect((await h.call('GET', '/v1/apps/parent-many/child_apps?page=abc')).status).toBe(422);
      expect((await h.call('GET', '/v1/apps/parent-many/child_apps', { as: 'other' })).status).toBe(404);
    });
  });
});
