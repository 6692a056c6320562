import { rmSync } from 'node:fs';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, waitForOperation, waitForStatus } from '../support/apps.ts';
import { removeInstance } from '../support/docker-cli.ts';

// The Go CLI cannot run on this machine (no Go toolchain); these are the exact requests
// go-scalingo sends and the fields it decodes (docs/research/clients-core.md), replayed as is.
const GO_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json',
  'user-agent': 'Scalingo CLI v1.30.0',
};

describe('what the official Go client sends and decodes', () => {
  let h: Harness;
  let bearer: string;
  const dir = copyFixture('busybox-web');
  const go = (method: string, path: string, body?: unknown) =>
    h.call(method, path, {
      as: { bearer },
      headers: GO_HEADERS,
      raw: method === 'GET' || method === 'DELETE' ? undefined : JSON.stringify(body ?? {}),
    });

  beforeAll(async () => {
    h = await startEmulator({ intervals: FAST, apps: [{ name: 'go-cli-app', dir }] });
  });
  afterAll(async () => {
    await h.stop();
    removeInstance(h.emu.instanceId);
    rmSync(dir, { recursive: true, force: true });
  });

  it('login: POST /v1/tokens (basic user:password, {"token":{"name"}}) → 201; exchange with body {} → JWT with numeric exp', async () => {
    const login = await h.call('POST', '/v1/tokens', {
      as: null,
      headers: { ...GO_HEADERS, authorization: `Basic ${Buffer.from('dev:dev-password').toString('base64')}` },
      raw: JSON.stringify({ token: { name: 'Scalingo CLI - laptop' } }),
    });
    expect(login.status).toBe(201);
    const apiToken = login.body.token.token;
    const ex = await h.call('POST', '/v1/tokens/exchange', {
      as: null,
      headers: { ...GO_HEADERS, authorization: `Basic ${Buffer.from(`:${apiToken}`).toString('base64')}` },
      raw: '{}',
    });
    expect(ex.status).toBe(200);
    bearer = ex.body.token;
    expect(typeof decodeJwt(bearer).exp).toBe('number');
    const self = await go('GET', '/v1/users/self');
    expect(Object.keys(self.body.user)).toEqual(
      expect.arrayContaining(['id', 'username', 'fullname', 'email', 'flags']),
    );
    const regions = await go('GET', '/v1/regions');
    expect(regions.body.regions.find((r: { default: boolean }) => r.default)).toMatchObject({
      name: 'local',
      api: h.api,
      database_api: expect.any(String),
    });
  });

  it('settings: PUT with unwrapped bodies; transfer without current_name; collaborator invite answers an object', async () => {
    await go('POST', '/v1/apps', { app: { name: 'go-settings-app' } });
    expect((await go('PUT', '/v1/apps/go-settings-app', { force_https: true })).body.app.force_https).toBe(true);
    expect((await go('PUT', '/v1/apps/go-settings-app', { sticky_session: true })).body.app.sticky_session).toBe(true);
    expect(
      (await go('PATCH', '/v1/apps/go-settings-app', { app: { stack_id: 'scalingo-24' } })).body.app.stack_id,
    ).toBe('scalingo-24');
    const invite = await go('POST', '/v1/apps/go-settings-app/collaborators', {
      collaborator: { email: 'other@example.test', is_limited: false },
    });
    expect(invite.status).toBe(201);
    expect(Array.isArray(invite.body.collaborator)).toBe(false);
    const transfer = await go('PATCH', '/v1/apps/go-settings-app', { app: { owner: 'other@example.test' } });
    expect(transfer.status).toBe(200);
    expect(transfer.body.app.owner.email).toBe('other@example.test');
  });

  it('scale: the whole ContainerType with app_id, command and size "" → 202 + Location; the operation always has finished_at', async () => {
    await waitForStatus(h, 'go-cli-app', 'running');
    expect((await go('GET', '/v1/apps/go-cli-app/autoscalers')).body).toEqual({ autoscalers: [] });
    const res = await go('POST', '/v1/apps/go-cli-app/scale', {
      containers: [{ name: 'web', amount: 2, size: '', app_id: '', command: '' }],
    });
    expect(res.status).toBe(202);
    const opId = new URL(res.headers.get('location')!).pathname.split('/').pop();
    // The CLI rebuilds the path from the app name and the last segment, and polls every second.
    const first = await go('GET', `/v1/apps/go-cli-app/operations/${opId}`);
    expect(typeof first.body.operation.finished_at).toBe('string');
    expect(Number.isNaN(Date.parse(first.body.operation.finished_at))).toBe(false);
    let op = first.body.operation;
    for (let i = 0; i < 60 && !['done', 'error'].includes(op.status); i++) {
      await new Promise((r) => setTimeout(r, 500));
      op = (await go('GET', `/v1/apps/go-cli-app/operations/${opId}`)).body.operation;
    }
    expect(op.status).toBe('done');
    const ps = await go('GET', '/v1/apps/go-cli-app/ps');
    for (const c of ps.body.containers) expect(typeof c.label).toBe('string');
    const restart = await go('POST', '/v1/apps/go-cli-app/restart', { scope: null });
    expect(restart.status).toBe(202);
    expect(restart.headers.get('location')).toMatch(/\/operations\//);
    await waitForOperation(h, restart.headers.get('location')!);
  });

  it('timeline: page=0&per_page=0 when unset; scale events carry string values', async () => {
    const res = await go('GET', '/v1/apps/go-cli-app/events?page=0&per_page=0');
    expect(res.status).toBe(200);
    const scale = res.body.events.find((e: { type: string }) => e.type === 'scale');
    for (const v of Object.values(scale.type_data.containers)) expect(typeof v).toBe('string');
    expect(res.body.meta.pagination.current_page).toBe(1);
  });

  it('errors are JSON for the statuses it parses (401, 404, 422)', async () => {
    for (const [status, path] of [
      [404, '/v1/apps/nope-nope-nope'],
      [401, '/v1/apps'],
    ] as const) {
      const r = status === 401 ? await h.call('GET', path, { as: { bearer: 'x.y.z' } }) : await go('GET', path);
      expect(r.status).toBe(status);
      expect(r.headers.get('content-type')).toMatch(/application\/json/);
    }
    const unknownType = await go('POST', '/v1/apps/go-cli-app/scale', {
      containers: [{ name: 'clock', amount: 1, size: '', app_id: '', command: '' }],
    });
    expect(unknownType.body.resource).toBe('container_type');
  });
});
