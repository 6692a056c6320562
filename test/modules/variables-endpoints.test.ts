import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { addLimitedCollaborator } from '../support/collaborators.ts';
import { FakeRuntime } from '../support/fake-runtime.ts';

// The endpoint recipe's template (CONTRIBUTING.md "Add an endpoint to an existing area"): copy this file for a new
// endpoint. An emulator of its own on port 0 with the in-memory runtime (no Docker), the happy path, then every
// failure path in the spec's shapes: 401, 404 for an unknown app and for another user's app, 403 for a Limited
// Collaborator, 400 for malformed JSON, 422 per invalid field. Here: listing and creating an app's variables.
describe('variables: list and create, with their failure paths', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startEmulator({}, { runtime: new FakeRuntime() });
    // `as` picks the test user (test/harness.ts TEST_USERS): 'dev' by default, 'other', 'trial', null for none.
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'vars-app' } } })).status).toBe(201);
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'vars-of-other' } }, as: 'other' })).status).toBe(
      201,
    );
  });
  afterAll(() => h.stop());

  it('creates a variable, then lists it', async () => {
    const created = await h.call('POST', '/v1/apps/vars-app/variables', {
      body: { variable: { name: 'GREETING', value: 'hello' } },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.variable).toMatchObject({ name: 'GREETING', value: 'hello' });

    const list = await h.call('GET', '/v1/apps/vars-app/variables');
    expect(list.status, list.text).toBe(200);
    expect(list.body.variables.map((v: { name: string }) => v.name)).toEqual(['GREETING']);
  });

  it('401 without credentials', async () => {
    const r = await h.call('GET', '/v1/apps/vars-app/variables', { as: null });
    expect(r.status, r.text).toBe(401);
  });

  it('404 {resource, error} for an unknown app and for another user’s app', async () => {
    for (const app of ['no-such-app', 'vars-of-other']) {
      const r = await h.call('GET', `/v1/apps/${app}/variables`);
      expect(r.status, r.text).toBe(404);
      expect(r.body).toEqual({ resource: 'app', error: expect.any(String) });
    }
  });

  it('403 {error} for a Limited Collaborator, who still sees the app', async () => {
    await addLimitedCollaborator(h, 'vars-app', 'other');
    expect((await h.call('GET', '/v1/apps/vars-app', { as: 'other' })).status).toBe(200);
    const r = await h.call('GET', '/v1/apps/vars-app/variables', { as: 'other' });
    expect(r.status, r.text).toBe(403);
    expect(r.body).toEqual({ error: expect.stringMatching(/limited collaborator/) });
  });

  it('400 {error} for malformed JSON, 422 {errors} naming the invalid field', async () => {
    const malformed = await h.call('POST', '/v1/apps/vars-app/variables', {
      raw: '{"variable":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status, malformed.text).toBe(400);
    expect(malformed.body).toEqual({ error: expect.any(String) });

    const invalid = await h.call('POST', '/v1/apps/vars-app/variables', { body: { variable: { value: 'no name' } } });
    expect(invalid.status, invalid.text).toBe(422);
    expect(Object.keys(invalid.body.errors)).toEqual(['name']);
  });
});
