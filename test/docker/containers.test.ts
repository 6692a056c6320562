import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, routerGet, waitForOperation, waitForStatus } from '../support/apps.ts';
import { docker, dockerPs, removeInstance } from '../support/docker-cli.ts';

// #10–#13, #19 observed in Docker: ps, formation, scale, restart, operations, variables.
const MB = 1024 * 1024;
const running = (h: Harness, app: string, type = 'web') =>
  dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.appName}=${app}`, `${LABELS.type}=${type}`]);
const answerOf = async (engineId: string) => (await fetch(`http://${docker('port', engineId, '5000')}/`)).text();

describe('containers (real Docker)', () => {
  let h: Harness;
  const dir = copyFixture('busybox-web');
  beforeAll(async () => {
    h = await startEmulator({ intervals: FAST, apps: [{ name: 'scaled-app', dir }] });
    await waitForStatus(h, 'scaled-app', 'running');
  });
  afterAll(async () => {
    await h.stop();
    removeInstance(h.emu.instanceId);
    rmSync(dir, { recursive: true, force: true });
  });

  it('scale web to 3: 202 + Location, operation pending → done, three containers in Docker with the M memory limit', async () => {
    const res = await h.call('POST', '/v1/apps/scaled-app/scale', {
      body: { containers: [{ name: 'web', amount: 3 }] },
    });
    expect(res.status).toBe(202);
    const location = res.headers.get('location')!;
    expect(location).toMatch(new RegExp(`^${h.api}/v1/apps/scaled-app/operations/[0-9a-f]{24}$`));
    expect(res.body.containers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: expect.any(String), name: 'web', amount: 3, size: 'M' }),
        expect.objectContaining({ name: 'worker', amount: 0 }), // the complete formation, types not scaled included
      ]),
    );
    expect((await h.call('GET', '/v1/apps/scaled-app')).body.app.status).toBe('scaling');
    const op = await waitForOperation(h, location);
    expect(op).toMatchObject({ status: 'done', type: 'scale' });
    expect(Date.parse(op.finished_at)).toBeGreaterThanOrEqual(Date.parse(op.created_at));

    const web = running(h, 'scaled-app');
    expect(web).toHaveLength(3);
    for (const c of web) expect(docker('inspect', '-f', '{{.HostConfig.Memory}}', c.id)).toBe(String(512 * MB));
    const answers = (await Promise.all(web.map((c) => answerOf(c.id)))).sort();
    expect(answers).toEqual(['version 1 from web-1\n', 'version 1 from web-2\n', 'version 1 from web-3\n']);

    // Through the router (its own port, Host: <app>.localhost), round-robin reaches each container.
    const viaRouter = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const res = await routerGet(h.emu.urls.routerPort, 'scaled-app');
      expect(res.status).toBe(200);
      viaRouter.add(res.body);
    }
    expect([...viaRouter].sort()).toEqual(answers);

    const ps = await h.call('GET', '/v1/apps/scaled-app/ps');
    const webPs = ps.body.containers.filter((c: { type: string }) => c.type === 'web');
    expect(webPs.map((c: { type_index: number }) => c.type_index).sort()).toEqual([1, 2, 3]);
    for (const c of webPs) {
      expect(c).toMatchObject({ state: 'running', size: 'M', label: `web-${c.type_index}`, deleted_at: null });
      expect(c.container_size).toMatchObject({
        name: 'M',
        memory: 512 * MB,
        human_cpu: expect.any(String),
        ordinal: 3,
        hourly_price: 20,
        thirtydays_price: 1440,
        sku: expect.any(String),
        pids_limit: 0,
        swap: 0,
      });
    }
    expect((await h.call('GET', '/v1/apps/scaled-app')).body.app.status).toBe('running');
    const ev = (await h.call('GET', '/v1/apps/scaled-app/events')).body.events.find(
      (e: { type: string }) => e.type === 'scale',
    );
    expect(ev.type_data).toEqual({
      previous_containers: { web: '1:M', worker: '0:M' },
      containers: { web: '3:M', worker: '0:M' },
    });
  });

  it('scale with a size replaces the containers with the new memory limit; scale down stops the highest indices', async () => {
    const res = await h.call('POST', '/v1/apps/scaled-app/scale', {
      body: {
        containers: [
          { name: 'web', amount: 2, size: 'L' },
          { name: 'worker', amount: 1 },
        ],
      },
    });
    expect((await waitForOperation(h, res.headers.get('location')!)).status).toBe('done');
    const web = running(h, 'scaled-app');
    expect(web).toHaveLength(2);
    for (const c of web) expect(docker('inspect', '-f', '{{.HostConfig.Memory}}', c.id)).toBe(String(1024 * MB));
    expect(running(h, 'scaled-app', 'worker')).toHaveLength(1);
    expect((await h.call('GET', '/v1/apps/scaled-app/containers')).body.containers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'web', amount: 2, size: 'L' }),
        expect.objectContaining({ name: 'worker', amount: 1, size: 'M' }),
      ]),
    );
  });

  it('restart replaces the containers in scope (new Docker ids), and picks up new variables', async () => {
    const set = await h.call('POST', '/v1/apps/scaled-app/variables', {
      body: { variable: { name: 'GREETING', value: 'hello-env' } },
    });
    expect(set.status).toBe(201);
    const webBefore = running(h, 'scaled-app').map((c) => c.id);
    const workerBefore = running(h, 'scaled-app', 'worker').map((c) => c.id);
    // Variables take effect at the next restart, not before.
    expect(docker('exec', webBefore[0], 'env')).not.toContain('GREETING=hello-env');
    const res = await h.call('POST', '/v1/apps/scaled-app/restart', { body: { scope: ['web'] } });
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
    expect((await h.call('GET', '/v1/apps/scaled-app')).body.app.status).toBe('restarting');
    expect((await waitForOperation(h, res.headers.get('location')!)).status).toBe('done');
    const webAfter = running(h, 'scaled-app').map((c) => c.id);
    expect(webAfter).toHaveLength(2);
    for (const id of webAfter) expect(webBefore).not.toContain(id);
    expect(running(h, 'scaled-app', 'worker').map((c) => c.id)).toEqual(workerBefore);
    const env = docker('exec', webAfter[0], 'env');
    expect(env).toContain('GREETING=hello-env');
    expect(env).toMatch(/^APP=scaled-app$/m);
    expect(env).toMatch(/^PORT=5000$/m);
    expect(env).toMatch(/^CONTAINER_SIZE=L$/m);
    expect(env).toMatch(new RegExp(`^CONTAINER_MEMORY=${1024 * MB}$`, 'm'));
    expect(env).toMatch(/^CONTAINER=web-[12]$/m);

    const one = await h.call('POST', '/v1/apps/scaled-app/restart', { body: { scope: ['web-2'] } });
    await waitForOperation(h, one.headers.get('location')!);
    const after2 = running(h, 'scaled-app').map((c) => c.id);
    expect(after2.filter((id) => webAfter.includes(id))).toHaveLength(1);
  });

  it('refuses bad scale and restart requests with the platform’s errors', async () => {
    const scale = (body: unknown, as: 'dev' | 'trial' = 'dev', app = 'scaled-app') =>
      h.call('POST', `/v1/apps/${app}/scale`, { body, as });
    const unknownType = await scale({ containers: [{ name: 'clock', amount: 1 }] });
    expect(unknownType.status).toBe(404);
    expect(unknownType.body).toEqual({ resource: 'container_type', error: 'clock is not a process type of the app' });
    const tooMany = await scale({ containers: [{ name: 'web', amount: 11 }] });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors).toHaveProperty('amount');
    expect((await scale({ containers: [{ name: 'web', amount: 1, size: 'XXL' }] })).body.errors).toHaveProperty('size');
    expect((await scale({ containers: [{ name: 'web', amount: -1 }] })).status).toBe(422);
    expect((await scale({ containers: [{ name: 'web', amount: 1.5 }] })).status).toBe(422);
    expect((await scale({})).body).toEqual({ errors: { containers: ['missing field'] } });
    expect((await scale({ containers: [{ name: 'web', amount: 1 }] }, 'dev', 'nope-app-x')).status).toBe(404);

    const restartUnknown = await h.call('POST', '/v1/apps/scaled-app/restart', { body: { scope: ['web-9'] } });
    expect(restartUnknown.status).toBe(404);
    expect(restartUnknown.body.resource).toBe('container');
    expect((await h.call('POST', '/v1/apps/scaled-app/restart', { body: { scope: ['nope'] } })).body.resource).toBe(
      'container_type',
    );
    expect((await h.call('GET', '/v1/apps/scaled-app/operations/nope')).body).toEqual({
      resource: 'operation',
      error: 'not found',
    });

    // During an operation, other operations are refused.
    const first = await scale({ containers: [{ name: 'web', amount: 3 }] });
    expect(first.status).toBe(202);
    const during = await scale({ containers: [{ name: 'web', amount: 1 }] });
    expect(during.status).toBe(409);
    expect(during.body.error).toMatch(/scaling/);
    expect((await h.call('POST', '/v1/apps/scaled-app/restart', { body: {} })).status).toBe(409);
    await waitForOperation(h, first.headers.get('location')!);
    expect(running(h, 'scaled-app')).toHaveLength(3);
  });

  it('without a payment method: one S or M web container only (402)', async () => {
    const trialDir = copyFixture('busybox-web');
    const t = await startEmulator({ intervals: FAST, apps: [{ name: 'trial-scaled', dir: trialDir, owner: 'trial' }] });
    try {
      await waitForStatus(t, 'trial-scaled', 'running', 60_000, 'trial');
      for (const containers of [
        [{ name: 'web', amount: 2 }],
        [{ name: 'web', amount: 1, size: 'L' }],
        [{ name: 'worker', amount: 1 }],
      ]) {
        const res = await t.call('POST', '/v1/apps/trial-scaled/scale', { as: 'trial', body: { containers } });
        expect(res.status).toBe(402);
        expect(res.body).toEqual({
          error: expect.stringMatching(/one S or M web/),
          url: expect.stringContaining('/_emulator/billing'),
        });
      }
      const ok = await t.call('POST', '/v1/apps/trial-scaled/scale', {
        as: 'trial',
        body: { containers: [{ name: 'web', amount: 1, size: 'S' }] },
      });
      expect(ok.status).toBe(202);
      await waitForOperation(t, ok.headers.get('location')!, 60_000, 'trial');
      expect(docker('inspect', '-f', '{{.HostConfig.Memory}}', running(t, 'trial-scaled')[0].id)).toBe(
        String(256 * MB),
      );
    } finally {
      await t.stop();
      removeInstance(t.emu.instanceId);
      rmSync(trialDir, { recursive: true, force: true });
    }
  });

  it('scaling a never-deployed app stores the formation (200, no operation) for the first deployment', async () => {
    await h.call('POST', '/v1/apps', { body: { app: { name: 'not-deployed' } } });
    const res = await h.call('POST', '/v1/apps/not-deployed/scale', {
      body: { containers: [{ name: 'web', amount: 2 }] },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('location')).toBeNull();
    expect(res.body.containers).toEqual([expect.objectContaining({ name: 'web', amount: 2 })]);
  });

  it('the official CLI’s pre-scale call and the size catalogue answer', async () => {
    expect((await h.call('GET', '/v1/apps/scaled-app/autoscalers')).body).toEqual({ autoscalers: [] });
    const sizes = await h.call('GET', '/v1/features/container_sizes', { as: null });
    expect(sizes.body.container_sizes.map((s: { name: string }) => s.name)).toEqual(['S', 'M', 'L', 'XL', '2XL']);
  });

  it('variables: list, bulk update, update, delete, and their failure paths', async () => {
    const bulk = await h.call('PUT', '/v1/apps/scaled-app/variables', {
      body: {
        variables: [
          { name: 'A_VAR', value: '1' },
          { name: 'GREETING', value: 'bonjour' },
        ],
      },
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.variables.map((v: { name: string }) => v.name).sort()).toEqual(['A_VAR', 'GREETING']);
    const list = await h.call('GET', '/v1/apps/scaled-app/variables');
    const a = list.body.variables.find((v: { name: string }) => v.name === 'A_VAR');
    expect(
      (await h.call('PATCH', `/v1/apps/scaled-app/variables/${a.id}`, { body: { variable: { value: '2' } } })).body
        .variable,
    ).toEqual({ id: a.id, name: 'A_VAR', value: '2' });
    expect((await h.call('DELETE', `/v1/apps/scaled-app/variables/${a.id}`)).status).toBe(204);
    expect((await h.call('DELETE', `/v1/apps/scaled-app/variables/${a.id}`)).body).toEqual({
      resource: 'variable',
      error: 'not found',
    });
    expect(
      (await h.call('POST', '/v1/apps/scaled-app/variables', { body: { variable: { name: '1BAD', value: 'x' } } })).body
        .errors,
    ).toHaveProperty('name');
    expect(
      (await h.call('POST', '/v1/apps/scaled-app/variables', { body: { variable: { name: 'OK' } } })).body,
    ).toEqual({ errors: { value: ['missing field'] } });
    expect((await h.call('GET', '/v1/apps/scaled-app/variables', { as: 'other' })).status).toBe(404);
    const types = (await h.call('GET', '/v1/apps/scaled-app/events?per_page=50')).body.events.map(
      (e: { type: string }) => e.type,
    );
    expect(types).toEqual(
      expect.arrayContaining(['new_variable', 'edit_variables', 'edit_variable', 'delete_variable']),
    );
  });
});
