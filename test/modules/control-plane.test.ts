import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopback, sameToken } from '../../src/modules/control/admin-auth.ts';
import { type Harness, startEmulator, TEST_USERS, TOKENS } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { keyPair } from '../support/ssh-keys.ts';

// The control plane (/_emulator/*) over HTTP: its guard, reset and snapshots. No container runs here;
// the Docker side of reset and restore is test/docker/control-plane.test.ts.
const ADMIN = 'admin-token-for-tests-0000000000';

describe('control plane: admin token, reset, snapshots', () => {
  let h: Harness;
  const admin = (method: string, path: string, opts: { body?: unknown; raw?: string } = {}) =>
    h.call(method, `/_emulator${path}`, { ...opts, as: { bearer: ADMIN } });
  const appNames = async (as: 'dev' | 'other' = 'dev') =>
    ((await h.call('GET', '/v1/apps', { as })).body.apps as { name: string }[]).map((a) => a.name).sort();

  beforeAll(async () => {
    h = await startEmulator({ adminToken: ADMIN });
  });
  afterAll(() => h.stop());

  it('every control route needs the admin token: none, another scheme, a user token or a wrong one → 401 {error}', async () => {
    for (const [method, path] of [
      ['POST', '/reset'],
      ['GET', '/snapshots'],
      ['POST', '/snapshots'],
      ['GET', '/faults'],
      ['POST', '/faults'],
      ['DELETE', '/faults'],
      ['GET', '/clock'],
      ['POST', '/clock/advance'],
      ['POST', '/snapshots/restore'],
    ]) {
      for (const as of [null, 'dev' as const, { bearer: 'admin-token-for-tests-0000000001' }, { bearer: TOKENS.dev }]) {
        const res = await h.call(method, `/_emulator${path}`, { as });
        expect(res.status, `${method} ${path} as ${JSON.stringify(as)}`).toBe(401);
        expect(res.body).toEqual({ error: expect.any(String) });
      }
    }
    expect((await admin('GET', '/faults')).status).toBe(200);
    // The public ones stay public.
    expect((await h.call('GET', '/_emulator/health', { as: null })).status).not.toBe(401);
    expect((await h.call('GET', '/_emulator/billing', { as: null })).status).toBe(200);
  });

  it('a non-loopback peer gets 403 even with the token; the token is compared in constant time', async () => {
    const env = (remoteAddress: string) => ({ incoming: { socket: { remoteAddress } } });
    const req = () => new Request('http://x/_emulator/faults', { headers: { authorization: `Bearer ${ADMIN}` } });
    const far = await h.emu.app.request(req(), undefined, env('192.168.1.20'));
    expect(far.status).toBe(403);
    expect(await far.json()).toEqual({ error: expect.stringContaining('loopback') });
    expect((await h.emu.app.request(req(), undefined, env('::ffff:127.0.0.1'))).status).toBe(200);
    expect((await h.emu.app.request(req(), undefined, env('::1'))).status).toBe(200);
    expect(['127.0.0.1', '127.8.9.1', '::1', '::ffff:127.0.0.1'].every(isLoopback)).toBe(true);
    expect(['10.0.0.1', '::ffff:10.0.0.1', 'fe80::1', '', undefined].some(isLoopback)).toBe(false);
    expect(sameToken('a', 'a')).toBe(true);
    expect(sameToken('a', 'ab')).toBe(false);
  });

  it('a random ad-… admin token per start when none is configured', async () => {
    const other = await startEmulator();
    try {
      expect(other.emu.adminToken).toMatch(/^ad-[A-Za-z0-9]{20,}$/);
      expect(other.emu.adminToken).not.toBe(h.emu.adminToken);
      expect((await other.call('GET', '/_emulator/clock', { as: { bearer: other.emu.adminToken } })).status).toBe(200);
    } finally {
      await other.stop();
    }
  });

  it('reset: every app, event and API-made token goes; configured users and tokens, and bearers made from them, keep working', async () => {
    const bearer = await h.bearer();
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'reset-a' } } })).status).toBe(201);
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'reset-b' } }, as: 'other' })).status).toBe(201);
    expect(
      (await h.call('POST', '/v1/apps/reset-a/variables', { body: { variable: { name: 'K', value: 'v' } } })).status,
    ).toBe(201);
    const made = await h.call('POST', '/v1/tokens', { body: { token: { name: 'made-by-api' } } });
    expect(made.status).toBe(201);
    const madeToken = made.body.token.token as string;

    const res = await admin('POST', '/reset');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await appNames()).toEqual([]);
    expect(await appNames('other')).toEqual([]);
    expect((await h.call('GET', '/v1/events')).body.events).toEqual([]);
    expect((await h.call('GET', '/v1/apps/reset-a', { as: { bearer } })).status).toBe(404); // the bearer still authenticates
    expect((await h.call('GET', '/v1/users/self')).body.user.username).toBe('dev');
    const basic = (t: string) => ({ authorization: `Basic ${Buffer.from(`:${t}`).toString('base64')}` });
    expect((await h.call('GET', '/v1/users/self', { as: null, headers: basic(madeToken) })).status).toBe(401);
    // The same names can be taken again at once.
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'reset-a' } } })).status).toBe(201);
  });

  it('reset keeps the SSH keys the config declares and removes those added through the API', async () => {
    const configured = keyPair('ed25519', 'from-config');
    const added = keyPair('ed25519', 'added');
    const other = await startEmulator({
      adminToken: ADMIN,
      users: TEST_USERS.map((u) => (u.username === 'dev' ? { ...u, sshKeys: [configured.publicKey] } : u)),
    });
    try {
      const names = async () =>
        ((await other.call('GET', '/v1/keys')).body.keys as { content: string }[]).map((k) => k.content).sort();
      await eventually(async () => (await names()).length === 1, { what: 'the configured key' });
      expect(
        (await other.call('POST', '/v1/keys', { body: { key: { name: 'added', content: added.publicKey } } })).status,
      ).toBe(201);
      expect(await names()).toEqual([added.publicKey, configured.publicKey].sort());
      expect((await other.call('POST', '/_emulator/reset', { as: { bearer: ADMIN } })).status).toBe(204);
      expect(await names()).toEqual([configured.publicKey]);
    } finally {
      await other.stop();
      for (const k of [configured, added]) rmSync(k.dir, { recursive: true, force: true });
    }
  });

  it('reset of one user (username or e-mail): only the apps that user owns go', async () => {
    await admin('POST', '/reset');
    await h.call('POST', '/v1/apps', { body: { app: { name: 'mine-1' } } });
    await h.call('POST', '/v1/apps', { body: { app: { name: 'theirs-1' } }, as: 'other' });
    expect((await admin('POST', '/reset', { body: { user: 'other@example.test' } })).status).toBe(204);
    expect(await appNames()).toEqual(['mine-1']);
    expect(await appNames('other')).toEqual([]);
    expect((await h.call('GET', '/v1/apps/mine-1/events')).body.events.map((e: { type: string }) => e.type)).toEqual([
      'new_app',
    ]);
    expect((await admin('POST', '/reset', { body: { user: 'dev' } })).status).toBe(204);
    expect(await appNames()).toEqual([]);
  });

  it('reset failure paths: unknown user → 404, bad body → 422, malformed JSON → 400', async () => {
    const unknown = await admin('POST', '/reset', { body: { user: 'nobody' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ resource: 'user', error: expect.stringContaining('nobody') });
    expect((await admin('POST', '/reset', { body: { user: 'scalingo-platform' } })).status).toBe(404);
    const bad = await admin('POST', '/reset', { body: { user: 5 } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.user).toBeDefined();
    expect((await admin('POST', '/reset', { body: { everything: true } })).status).toBe(422);
    const malformed = await admin('POST', '/reset', { raw: '{"user":' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ error: expect.any(String) });
  });

  it('snapshot → change → restore brings the state back; list, download, delete', async () => {
    await admin('POST', '/reset');
    await h.call('POST', '/v1/apps', { body: { app: { name: 'kept-app' } } });
    await h.call('POST', '/v1/apps/kept-app/variables', { body: { variable: { name: 'A', value: '1' } } });
    const made = await admin('POST', '/snapshots');
    expect(made.status).toBe(201);
    const snap = made.body.snapshot;
    expect(snap).toEqual({
      id: expect.stringMatching(/^sn-[0-9a-f]{24}$/),
      created_at: expect.any(String),
      size: expect.any(Number),
    });

    expect((await h.call('DELETE', '/v1/apps/kept-app?current_name=kept-app')).status).toBe(204);
    await h.call('POST', '/v1/apps', { body: { app: { name: 'later-app' } } });
    expect(await appNames()).toEqual(['later-app']);

    expect((await admin('POST', `/snapshots/${snap.id}/restore`)).status).toBe(204);
    expect(await appNames()).toEqual(['kept-app']);
    expect((await h.call('GET', '/v1/apps/kept-app/variables')).body.variables).toEqual([
      expect.objectContaining({ name: 'A', value: '1' }),
    ]);

    expect((await admin('GET', '/snapshots')).body.snapshots).toContainEqual(snap);
    const file = await fetch(`${h.api}/_emulator/snapshots/${snap.id}`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/vnd.sqlite3');
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(bytes.subarray(0, 15).toString()).toBe('SQLite format 3');
    expect(bytes.length).toBe(snap.size);

    // Import: the downloaded file, posted back as the body, after a reset.
    await admin('POST', '/reset');
    expect(await appNames()).toEqual([]);
    const imported = await fetch(`${h.api}/_emulator/snapshots/restore`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/vnd.sqlite3' },
      body: bytes,
    });
    expect(imported.status).toBe(204);
    expect(await appNames()).toEqual(['kept-app']);

    expect((await admin('DELETE', `/snapshots/${snap.id}`)).status).toBe(204);
    expect((await admin('GET', `/snapshots/${snap.id}`)).status).toBe(404);
    expect((await admin('GET', '/snapshots')).body.snapshots.map((s: { id: string }) => s.id)).not.toContain(snap.id);
  });

  it("in-process: the control area's control does what the routes do (reset, snapshot, restore from a Buffer, faults)", async () => {
    const control = h.emu.area('control').control;
    await control.reset();
    await h.call('POST', '/v1/apps', { body: { app: { name: 'inproc-app' } } });
    const snap = control.snapshot();
    await control.reset();
    expect(await appNames()).toEqual([]);
    await control.restore(snap.id);
    expect(await appNames()).toEqual(['inproc-app']);
    const bytes = control.snapshots.data(snap.id);
    await control.reset({ user: 'dev' });
    await control.restore(new Uint8Array(bytes));
    expect(await appNames()).toEqual(['inproc-app']);
    const fault = await control.faults.add({ path: '/v1/apps/inproc-app', status: 503, count: 1 });
    expect(fault).toMatchObject({ id: expect.stringMatching(/^flt-/), type: 'api', remaining: 1 });
    expect(control.faults.list()).toEqual([fault]);
    expect((await h.call('GET', '/v1/apps/inproc-app')).status).toBe(503);
    expect(control.faults.list()).toEqual([]);
    await expect(control.faults.add({ path: 'no-slash', status: 500 })).rejects.toMatchObject({ status: 422 });
    expect(() => control.faults.remove('flt-nope')).toThrow();
    control.snapshots.remove(snap.id);
  });

  it('snapshot failure paths: unknown id → 404 {resource, error}; a body that is not an emulator database → 422', async () => {
    for (const [method, path] of [
      ['GET', '/snapshots/sn-000000000000000000000000'],
      ['POST', '/snapshots/sn-000000000000000000000000/restore'],
      ['DELETE', '/snapshots/nope'],
    ]) {
      const res = await admin(method, path);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toEqual({ resource: 'snapshot', error: expect.any(String) });
    }
    const post = (body: Uint8Array | string) =>
      fetch(`${h.api}/_emulator/snapshots/restore`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}` },
        body: body as BodyInit,
      });
    for (const body of [
      '',
      'not a database at all',
      Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(200)]),
    ]) {
      const res = await post(body);
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual({ errors: { snapshot: [expect.any(String)] } });
    }
    // A valid SQLite file that is not the emulator's.
    const Database = (await import('better-sqlite3')).default;
    const foreign = new Database(':memory:');
    foreign.exec('CREATE TABLE t (x)');
    const res = await post(foreign.serialize());
    foreign.close();
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ errors: { snapshot: ['is not a database of the emulator'] } });
  });
});
