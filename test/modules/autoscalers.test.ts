import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';

describe('autoscalers API', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startEmulator();
    await h.call('POST', '/v1/apps', { body: { app: { name: 'scaled-app' } } });
    await h.call('POST', '/v1/apps', { body: { app: { name: 'trial-scaled' } }, as: 'trial' });
  });
  afterAll(() => h.stop());
  // go-scalingo's AutoscalerAdd wraps the whole Autoscaler struct, zero values included.
  const goCreate = (over: object = {}) => ({
    autoscaler: {
      id: '',
      app_id: '',
      container_type: 'web',
      metric: 'cpu',
      target: 0.75,
      min_containers: 2,
      max_containers: 4,
      disabled: false,
      ...over,
    },
  });

  it('creates, lists, shows, updates (unwrapped and wrapped) and deletes, with the platform events', async () => {
    const created = await h.call('POST', '/v1/apps/scaled-app/autoscalers', { body: goCreate() });
    expect(created.status).toBe(201);
    const a = created.body.autoscaler;
    expect(a).toMatchObject({
      id: expect.stringMatching(/^au-/),
      container_type: 'web',
      metric: 'cpu',
      target: 0.75,
      min_containers: 2,
      max_containers: 4,
      disabled: false,
      last_scale: null,
    });
    expect((await h.call('GET', '/v1/apps/scaled-app/autoscalers')).body.autoscalers).toHaveLength(1);
    expect((await h.call('GET', `/v1/apps/scaled-app/autoscalers/${a.id}`)).body.autoscaler.id).toBe(a.id);
    // go-scalingo AutoscalerUpdate: the params unwrapped.
    const up = await h.call('PATCH', `/v1/apps/scaled-app/autoscalers/${a.id}`, {
      body: { max_containers: 6, disabled: true },
    });
    expect(up.body.autoscaler).toMatchObject({ max_containers: 6, disabled: true, min_containers: 2 });
    const wrapped = await h.call('PATCH', `/v1/apps/scaled-app/autoscalers/${a.id}`, {
      body: { autoscaler: { metric: 'p95_response_time', target: 67, disabled: false } },
    });
    expect(wrapped.body.autoscaler).toMatchObject({ metric: 'p95_response_time', target: 67, disabled: false });
    const events = (await h.call('GET', '/v1/apps/scaled-app/events')).body.events;
    expect(events[0]).toMatchObject({
      type: 'edit_autoscaler',
      type_data: {
        container_type: 'web',
        min_containers: '2',
        max_containers: '6',
        metric: 'p95_response_time',
        target: 67,
        target_text: '67 ms',
      },
    });
    expect(events.find((e: { type: string }) => e.type === 'new_autoscaler').type_data).toMatchObject({
      min_containers: '2',
      max_containers: '4',
      target_text: '75%',
    });
    expect((await h.call('DELETE', `/v1/apps/scaled-app/autoscalers/${a.id}`)).status).toBe(204);
    expect((await h.call('GET', '/v1/apps/scaled-app/events')).body.events[0]).toMatchObject({
      type: 'delete_autoscaler',
      type_data: { container_type: 'web', metric: 'p95_response_time' },
    });
    expect((await h.call('GET', '/v1/apps/scaled-app/autoscalers')).body).toEqual({ autoscalers: [] });
  });

  it('validates as the platform: metrics, router metrics on web only, fractions, bounds, one per type', async () => {
    const post = (over: object) => h.call('POST', '/v1/apps/scaled-app/autoscalers', { body: goCreate(over) });
    expect((await post({ metric: 'rpm' })).body.errors.metric[0]).toMatch(/must be one of cpu, memory, swap/);
    expect(
      (await post({ container_type: 'worker', metric: 'rpm_per_container', target: 100 })).body.errors.metric[0],
    ).toMatch(/only web containers/);
    expect((await post({ target: 75 })).body.errors.target[0]).toMatch(/fraction between 0 and 1/);
    expect((await post({ target: 0 })).body).toEqual({ errors: { target: ['must be greater than 0'] } });
    expect((await post({ min_containers: 1 })).body).toEqual({
      errors: { min_containers: ['must be greater than or equal to 2'] },
    });
    expect((await post({ min_containers: 5, max_containers: 3 })).body.errors).toHaveProperty('max_containers');
    expect((await post({ max_containers: 11 })).body).toEqual({
      errors: { max_containers: ['must be less than or equal to 10'] },
    });
    expect((await post({ min_containers: 2.5 })).body.errors).toHaveProperty('min_containers');
    expect((await post({ target: 'high' })).body.errors.target).toEqual(['must be a number']);
    expect((await h.call('POST', '/v1/apps/scaled-app/autoscalers', { body: { container_type: 'web' } })).body).toEqual(
      { errors: { autoscaler: ['missing field'] } },
    );
    expect((await post({})).status).toBe(201);
    expect((await post({})).body.errors.container_type[0]).toMatch(/already has an autoscaler/);
    const id = (await h.call('GET', '/v1/apps/scaled-app/autoscalers')).body.autoscalers[0].id;
    expect(
      (await h.call('PATCH', `/v1/apps/scaled-app/autoscalers/${id}`, { body: { min_containers: 9 } })).body.errors,
    ).toHaveProperty('max_containers');
    expect(
      (
        await h.call('PATCH', `/v1/apps/scaled-app/autoscalers/${id}`, {
          raw: 'null',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(422);
    expect((await h.call('GET', '/v1/apps/scaled-app/autoscalers/au-nope')).body).toEqual({
      resource: 'autoscaler',
      error: 'not found',
    });
    expect((await h.call('DELETE', '/v1/apps/scaled-app/autoscalers/au-nope')).status).toBe(404);
    expect((await h.call('GET', '/v1/apps/scaled-app/autoscalers', { as: 'other' })).status).toBe(404);
    // Without a payment method, only one web container: no autoscaler.
    const trial = await h.call('POST', '/v1/apps/trial-scaled/autoscalers', { as: 'trial', body: goCreate() });
    expect(trial.status).toBe(402);
    expect(trial.body).toMatchObject({ error: expect.stringMatching(/payment method/), url: expect.any(String) });
  });

  it('a manual scale of the type disables its autoscaler (the CLI warns about it)', async () => {
    const [a] = (await h.call('GET', '/v1/apps/scaled-app/autoscalers')).body.autoscalers;
    expect(a.disabled).toBe(false);
    expect(
      (await h.call('POST', '/v1/apps/scaled-app/scale', { body: { containers: [{ name: 'web', amount: 3 }] } }))
        .status,
    ).toBe(200);
    expect((await h.call('GET', `/v1/apps/scaled-app/autoscalers/${a.id}`)).body.autoscaler.disabled).toBe(true);
  });

  it('a limited collaborator reads autoscalers but cannot change them', async () => {
    await h.call('POST', '/v1/apps/scaled-app/collaborators', {
      body: { collaborator: { email: 'other@example.test', is_limited: true } },
    });
    expect((await h.call('GET', '/v1/apps/scaled-app/autoscalers', { as: 'other' })).status).toBe(200);
    expect(
      (
        await h.call('POST', '/v1/apps/scaled-app/autoscalers', {
          as: 'other',
          body: goCreate({ container_type: 'worker' }),
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await h.call('POST', '/v1/apps/scaled-app/scale', {
          as: 'other',
          body: { containers: [{ name: 'web', amount: 2 }] },
        })
      ).status,
    ).toBe(403);
  });
});
