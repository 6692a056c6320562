import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';

// API faults as a client sees them (status and body, latency, a dropped connection), their
// probability and count, and docker_unavailable through the container endpoints.
const ADMIN = 'admin-token-for-faults-000000000';

describe('control plane: faults', () => {
  let h: Harness;
  const admin = (method: string, path: string, body?: unknown) =>
    h.call(method, `/_emulator${path}`, { body, as: { bearer: ADMIN } });
  const addFault = async (fault: Record<string, unknown>) => {
    const res = await admin('POST', '/faults', { fault });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.fault as { id: string; type: string; applied: number; remaining: number | null };
  };

  beforeAll(async () => {
    h = await startEmulator({ adminToken: ADMIN });
    await h.call('POST', '/v1/apps', { body: { app: { name: 'faulty' } } });
  });
  beforeEach(async () => {
    await admin('DELETE', '/faults');
  });
  afterAll(() => h.stop());

  it('status 500 / 503 with the platform’s {error} body, 429 as plain text with Retry-After; other methods and paths untouched', async () => {
    await addFault({ method: 'GET', path: '/v1/apps/*', status: 500 });
    const r500 = await h.call('GET', '/v1/apps/faulty');
    expect(r500.status).toBe(500);
    expect(r500.body).toEqual({ error: expect.any(String) });
    expect(r500.headers.get('x-request-id')).toBeTruthy();
    expect((await h.call('GET', '/v1/apps')).status).toBe(200); // * is one segment: /v1/apps does not match /v1/apps/*
    expect((await h.call('PATCH', '/v1/apps/faulty', { body: { app: { force_https: false } } })).status).toBe(200);

    await admin('DELETE', '/faults');
    await addFault({ type: 'api', method: 'post', path: '/v1/apps/*/scale', status: 503 });
    const r503 = await h.call('POST', '/v1/apps/faulty/scale', { body: { containers: [{ name: 'web', amount: 1 }] } });
    expect(r503.status).toBe(503);
    expect(r503.body).toEqual({ error: expect.any(String) });
    expect((await h.call('POST', '/v1/apps/faulty/a/scale', { body: {} })).status).not.toBe(503);

    await admin('DELETE', '/faults');
    await addFault({ path: '/v1/**', status: 429 });
    const r429 = await h.call('GET', '/v1/users/self');
    expect(r429.status).toBe(429);
    expect(r429.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(r429.headers.get('retry-after')).toBe('1');
    expect(r429.text).toMatch(/rate limit/i);
    // The control plane itself is never faulted.
    expect((await admin('GET', '/faults')).status).toBe(200);
  });

  it('count: applies that many times, then the fault is gone from the list', async () => {
    const f = await addFault({ path: '/v1/users/self', status: 500, count: 2 });
    expect(f).toMatchObject({ type: 'api', method: '*', applied: 0, remaining: 2 });
    expect((await admin('GET', '/faults')).body.faults).toEqual([expect.objectContaining({ id: f.id })]);
    expect((await h.call('GET', '/v1/users/self')).status).toBe(500);
    expect((await admin('GET', '/faults')).body.faults[0]).toMatchObject({ applied: 1, remaining: 1 });
    expect((await h.call('GET', '/v1/users/self')).status).toBe(500);
    expect((await h.call('GET', '/v1/users/self')).status).toBe(200);
    expect((await admin('GET', '/faults')).body.faults).toEqual([]);
  });

  it('probability with a seed: the same draws each time; probability 0 never fires', async () => {
    const pattern = async () => {
      await admin('DELETE', '/faults');
      await addFault({ path: '/v1/users/self', status: 503, probability: 0.5, seed: 42 });
      const out: number[] = [];
      for (let i = 0; i < 20; i++) out.push((await h.call('GET', '/v1/users/self')).status);
      return out;
    };
    const first = await pattern();
    expect(first).toContain(503);
    expect(first).toContain(200);
    expect(await pattern()).toEqual(first);
    await admin('DELETE', '/faults');
    await addFault({ path: '/v1/users/self', status: 503, probability: 0 });
    for (let i = 0; i < 10; i++) expect((await h.call('GET', '/v1/users/self')).status).toBe(200);
  });

  it('latency: the answer comes no sooner than latency_ms, and it is the real one', async () => {
    await addFault({ method: 'GET', path: '/v1/users/self', latency_ms: 400 });
    const t0 = performance.now();
    const res = await h.call('GET', '/v1/users/self');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(390);
    expect(res.status).toBe(200);
    expect(res.body.user.username).toBe('dev');
  });

  it('drop: the connection is closed without an answer (socket hang up); the next request is served', async () => {
    await addFault({ path: '/v1/users/self', drop: true, count: 1 });
    const url = new URL(`${h.api}/v1/users/self`);
    const outcome = await new Promise<string>((resolve) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          agent: false,
          headers: { authorization: `Basic ${Buffer.from(`:${TOKENS.dev}`).toString('base64')}` },
        },
        (res) => resolve(`answered ${res.statusCode}`),
      );
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      req.end();
    });
    expect(outcome).toBe('ECONNRESET');
    expect((await h.call('GET', '/v1/users/self')).status).toBe(200);
  });

  it('docker_unavailable: container endpoints answer 503 and health says unavailable, then both recover by themselves', async () => {
    expect((await h.call('GET', '/v1/apps/faulty/ps')).status).toBe(200);
    const f = await addFault({ type: 'docker_unavailable', seconds: 1.5 });
    expect(f).toMatchObject({ type: 'docker_unavailable', expires_at: expect.any(String) });
    const ps = await h.call('GET', '/v1/apps/faulty/ps');
    expect(ps.status).toBe(503);
    expect(ps.body).toEqual({ error: expect.stringContaining('Docker') });
    const health = await h.call('GET', '/_emulator/health', { as: null });
    expect(health.body.subsystems.docker.status).toBe('unavailable');
    await eventually(async () => (await h.call('GET', '/v1/apps/faulty/ps')).status === 200, {
      timeoutMs: 10_000,
      what: 'ps to answer again',
    });
    expect((await h.call('GET', '/_emulator/health', { as: null })).body.subsystems.docker.status).toBe('ok');
    expect((await admin('GET', '/faults')).body.faults).toEqual([]);
  });

  it('DELETE one fault by id; unknown id → 404', async () => {
    const f = await addFault({ path: '/v1/users/self', status: 500 });
    expect((await admin('DELETE', `/faults/${f.id}`)).status).toBe(204);
    expect((await h.call('GET', '/v1/users/self')).status).toBe(200);
    const res = await admin('DELETE', `/faults/${f.id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ resource: 'fault', error: expect.any(String) });
  });

  it('bad fault bodies → 422 {errors}; malformed JSON → 400; crash/oom of unknown apps or containers → 404', async () => {
    const bad: [unknown, string][] = [
      [{}, 'fault'],
      [{ fault: 'x' }, 'fault'],
      [{ fault: { path: '/v1/apps' } }, 'latency_ms'], // nothing to do
      [{ fault: { path: 'v1/apps', status: 500 } }, 'path'],
      [{ fault: { path: '/v1/apps', status: 418 } }, 'status'],
      [{ fault: { path: '/v1/apps', status: 500, drop: true } }, 'drop'],
      [{ fault: { path: '/v1/apps', latency_ms: -1 } }, 'latency_ms'],
      [{ fault: { path: '/v1/apps', status: 500, probability: 2 } }, 'probability'],
      [{ fault: { path: '/v1/apps', status: 500, count: 0 } }, 'count'],
      [{ fault: { path: '/v1/apps', status: 500, regex: '(a+)+' } }, 'fault'],
      [{ fault: { type: 'earthquake' } }, 'type'],
      [{ fault: { type: 'docker_unavailable' } }, 'seconds'],
      [{ fault: { type: 'crash', app: 'faulty', container: 'web' } }, 'container'],
      [{ fault: { type: 'log_delay', log_delay_ms: 0 } }, 'log_delay_ms'],
    ];
    for (const [body, field] of bad) {
      const res = await admin('POST', '/faults', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(Object.keys(res.body.errors).join(','), JSON.stringify(body)).toContain(field);
    }
    const malformed = await h.call('POST', '/_emulator/faults', { raw: '{"fault": {', as: { bearer: ADMIN } });
    expect(malformed.status).toBe(400);
    const noApp = await admin('POST', '/faults', { fault: { type: 'crash', app: 'nope', container: 'web-1' } });
    expect(noApp.status).toBe(404);
    expect(noApp.body).toEqual({ resource: 'app', error: expect.any(String) });
    const noContainer = await admin('POST', '/faults', { fault: { type: 'oom', app: 'faulty', container: 'web-1' } });
    expect(noContainer.status).toBe(404);
    expect(noContainer.body.resource).toBe('container');
    expect((await admin('GET', '/faults')).body.faults).toEqual([]);
  });
});
