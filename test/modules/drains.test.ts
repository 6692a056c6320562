import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { createApp } from '../support/logs.ts';

// #31–#36 log drains (API side) and the stand-in addons they attach to.
describe('log drains API (#31–#36)', () => {
  let h: Harness;
  let app: { id: string; name: string };
  let addonId: string;
  const base = () => `/v1/apps/${app.name}/log_drains`;

  beforeAll(async () => {
    h = await startEmulator({}, { runtime: new FakeLogsRuntime() });
    app = await createApp(h, 'drains-api-app');
    const r = await h.call('POST', `/v1/apps/${app.name}/addons`, {
      body: { addon: { addon_provider_id: 'scalingo-redis', plan_id: 'redis-sandbox' } },
    });
    addonId = r.body.addon.id;
  });
  afterAll(() => h.stop());

  // The Go client's body: every key present, empty ones as "" (research §3.1).
  const goBody = (d: Record<string, string>) => ({
    drain: { type: '', url: '', port: '', host: '', token: '', drain_region: '', ...d },
  });

  it('composes each type’s url like the platform, answers 201 {drain:{url}}', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ type: 'syslog', token: 'tok', host: 'logs.example.test', port: '514' }, 'syslog://:tok@logs.example.test:514'],
      [{ type: 'syslog', token: 'tok', host: 'udp://127.0.0.1', port: '5140' }, 'syslog+udp://:tok@127.0.0.1:5140'],
      [{ type: 'syslog', token: 'tok', host: '127.0.0.1', port: '6514' }, 'syslog+tls://:tok@127.0.0.1:6514'],
      [{ type: 'datadog', token: 'dd', drain_region: 'eu' }, 'datadog://dd?region=eu'],
      [{ type: 'ovh-graylog', token: 'ovh', host: 'gra.example.test' }, 'ovh://:ovh@gra.example.test:6514'],
      [
        { type: 'papertrail', host: 'logs.papertrail.test', port: '10333', token: '' },
        'tcp://logs.papertrail.test:10333',
      ],
      [
        { type: 'papertrail', host: 'tls://logs.papertrail.test', port: '10334' },
        'tcp+tls://logs.papertrail.test:10334',
      ],
      [{ type: 'appsignal', token: 'as', host: 'appsignal.test', port: '514' }, 'appsignal://:as@appsignal.test:514'],
      [{ type: 'elk', url: 'https://user:pw@elk.example.test:443' }, 'https://user:pw@elk.example.test:443'],
      [{ type: 'logentries', token: 'le' }, 'logentries://le'],
      [{ type: 'logtail', token: 'lt' }, 'logtail://lt'],
      [{ type: 'betterstack', token: 'bs', host: 'in.betterstack.test' }, 'betterstack://:bs@in.betterstack.test'],
    ];
    for (const [d, url] of cases) {
      const r = await h.call('POST', base(), { body: goBody(d) });
      expect(r.status, JSON.stringify(d)).toBe(201);
      expect(r.body).toEqual({ drain: { url } });
    }
    const list = await h.call('GET', base());
    expect(list.body.drains).toEqual(cases.map(([, url]) => ({ app_id: app.id, url })));
  });

  it('422 names every missing field of the type; unknown type; bad shapes', async () => {
    const missing = await h.call('POST', base(), { body: goBody({ type: 'syslog', host: 'h.test' }) });
    expect(missing.status).toBe(422);
    expect(Object.keys(missing.body.errors).sort()).toEqual(['port', 'token']);
    expect(missing.body.errors.token[0]).toMatch(/missing field.*syslog/);
    expect((await h.call('POST', base(), { body: goBody({ type: 'datadog', token: 't' }) })).body.errors).toEqual({
      drain_region: [expect.stringMatching(/missing field/)],
    });
    expect((await h.call('POST', base(), { body: goBody({ type: 'elk' }) })).body.errors).toHaveProperty('url');
    expect(
      (await h.call('POST', base(), { body: goBody({ type: 'ovh-graylog', host: 'x.test' }) })).body.errors,
    ).toHaveProperty('token');
    expect(
      (await h.call('POST', base(), { body: goBody({ type: 'papertrail', host: 'x.test' }) })).body.errors,
    ).toHaveProperty('port');
    const unknown = await h.call('POST', base(), { body: goBody({ type: 'splunk', token: 't' }) });
    expect(unknown.body.errors.type[0]).toMatch(/not a supported drain type.*syslog/);
    expect((await h.call('POST', base(), { body: goBody({ token: 't' }) })).body).toEqual({
      errors: { type: ['missing field'] },
    });
    expect(
      (await h.call('POST', base(), { body: goBody({ type: 'syslog', token: 't', host: 'h.test', port: '99999' }) }))
        .body.errors,
    ).toHaveProperty('port');
    expect(
      (await h.call('POST', base(), { body: goBody({ type: 'syslog', token: 't', host: 'bad host', port: '514' }) }))
        .body.errors,
    ).toHaveProperty('host');
    expect(
      (await h.call('POST', base(), { body: goBody({ type: 'elk', url: 'ftp://x' }) })).body.errors,
    ).toHaveProperty('url');
    expect((await h.call('POST', base(), { body: {} })).body).toEqual({ errors: { drain: ['missing field'] } });
    expect(
      (await h.call('POST', base(), { raw: '{"drain":', headers: { 'content-type': 'application/json' } })).status,
    ).toBe(400);
    // Same url twice.
    const dup = goBody({ type: 'logtail', token: 'dup' });
    expect((await h.call('POST', base(), { body: dup })).status).toBe(201);
    expect((await h.call('POST', base(), { body: dup })).body.errors).toHaveProperty('url');
  });

  it('deletes by url in the query string (Go CLI) or the JSON body (spec); events recorded', async () => {
    await h.call('POST', base(), { body: goBody({ type: 'syslog', token: 'q', host: 'q.test', port: '514' }) });
    await h.call('POST', base(), { body: goBody({ type: 'syslog', token: 'b', host: 'b.test', port: '514' }) });
    const q = await h.call('DELETE', `${base()}?url=${encodeURIComponent('syslog://:q@q.test:514')}`);
    expect(q.status).toBe(204);
    const b = await h.call('DELETE', base(), { body: { url: 'syslog://:b@b.test:514' } });
    expect(b.status).toBe(204);
    const urls = (await h.call('GET', base())).body.drains.map((d: { url: string }) => d.url);
    expect(urls).not.toContain('syslog://:q@q.test:514');
    expect(urls).not.toContain('syslog://:b@b.test:514');
    const events = (await h.call('GET', `/v1/apps/${app.name}/events?per_page=100`)).body.events;
    expect(events.find((e: { type: string }) => e.type === 'delete_log_drain').type_data).toEqual({
      url: 'syslog://:b@b.test:514',
    });
    expect(
      events.some(
        (e: { type: string; type_data: { url: string } }) =>
          e.type === 'new_log_drain' && e.type_data.url === 'syslog://:q@q.test:514',
      ),
    ).toBe(true);
  });

  it('delete failure paths: no url 422, unknown url 404, foreign app 404', async () => {
    expect((await h.call('DELETE', base())).body).toEqual({
      errors: { url: [expect.stringMatching(/missing field/)] },
    });
    expect((await h.call('DELETE', `${base()}?url=syslog://nope`)).body).toEqual({
      resource: 'log_drain',
      error: 'not found',
    });
    expect((await h.call('GET', base(), { as: 'other' })).status).toBe(404);
    expect((await h.call('POST', base(), { as: 'other', body: goBody({ type: 'logtail', token: 'x' }) })).status).toBe(
      404,
    );
  });

  it('addon drains: add, list, delete, with addon events; app and addon lists are separate', async () => {
    const path = `/v1/apps/${app.name}/addons/${addonId}/log_drains`;
    const add = await h.call('POST', path, {
      body: goBody({ type: 'syslog', token: 'ad', host: 'addon.test', port: '514' }),
    });
    expect(add.status).toBe(201);
    expect((await h.call('GET', path)).body).toEqual({
      drains: [{ app_id: app.id, url: 'syslog://:ad@addon.test:514' }],
    });
    expect((await h.call('GET', base())).body.drains.map((d: { url: string }) => d.url)).not.toContain(
      'syslog://:ad@addon.test:514',
    );
    expect((await h.call('DELETE', `${path}?url=${encodeURIComponent('syslog://:ad@addon.test:514')}`)).status).toBe(
      204,
    );
    expect((await h.call('GET', path)).body).toEqual({ drains: [] });
    const events = (await h.call('GET', `/v1/apps/${app.name}/events?per_page=100`)).body.events;
    expect(events.find((e: { type: string }) => e.type === 'new_addon_log_drain').type_data).toEqual({
      url: 'syslog://:ad@addon.test:514',
      addon_uuid: addonId,
      addon_name: 'Redis',
    });
    expect(events.find((e: { type: string }) => e.type === 'delete_addon_log_drain').type_data).toMatchObject({
      addon_uuid: addonId,
    });
    // Unknown addon: 404 {resource: "addon"} on every verb.
    for (const m of ['GET', 'POST', 'DELETE']) {
      const r = await h.call(
        m,
        `/v1/apps/${app.name}/addons/ad-unknown/log_drains?url=x`,
        m === 'POST' ? { body: goBody({ type: 'logtail', token: 'x' }) } : {},
      );
      expect(r.body, m).toEqual({ resource: 'addon', error: 'not found' });
    }
  });
});

describe('addons (stand-ins for addon drains)', () => {
  let h: Harness;
  let app: { id: string; name: string };
  beforeAll(async () => {
    h = await startEmulator({}, { runtime: new FakeLogsRuntime() });
    app = await createApp(h, 'addons-app');
  });
  afterAll(() => h.stop());

  it('provisions (201) an addon with the real field names, lists, shows, changes plan, deletes', async () => {
    const plans = (await h.call('GET', '/v1/addon_providers/scalingo-postgresql/plans')).body.plans;
    const r = await h.call('POST', `/v1/apps/${app.name}/addons`, {
      body: { addon: { addon_provider_id: 'scalingo-postgresql', plan_id: plans[0].id } },
    });
    expect(r.status).toBe(201);
    const a = r.body.addon;
    expect(a).toMatchObject({
      app_id: app.id,
      status: 'running',
      addon_provider: { id: 'scalingo-postgresql', name: 'PostgreSQL' },
      plan: { id: plans[0].id, name: 'postgresql-sandbox', disabled_alternative_plan_id: null },
      deprovisioned_at: null,
    });
    expect(a.id).toMatch(/^ad-[0-9a-f-]{36}$/);
    expect(a.resource_id).toMatch(/^addons_app_postgresql_[0-9a-f]{4}$/);
    expect(typeof a.addon_provider.logo_url).toBe('string');
    expect((await h.call('GET', `/v1/apps/${app.name}/addons`)).body.addons.map((x: { id: string }) => x.id)).toEqual([
      a.id,
    ]);
    expect((await h.call('GET', `/v1/apps/${app.name}/addons/${a.id}`)).body.addon.id).toBe(a.id);
    const up = await h.call('PATCH', `/v1/apps/${app.name}/addons/${a.id}`, {
      body: { addon: { plan_id: 'postgresql-starter-512' } },
    });
    expect(up.body.addon.plan.name).toBe('postgresql-starter-512');
    expect((await h.call('DELETE', `/v1/apps/${app.name}/addons/${a.id}`)).status).toBe(204);
    expect((await h.call('GET', `/v1/apps/${app.name}/addons`)).body).toEqual({ addons: [] });
    const types = (await h.call('GET', `/v1/apps/${app.name}/events`)).body.events.map((e: { type: string }) => e.type);
    expect(types).toContain('new_addon');
    expect(types).toContain('delete_addon');
  });

  it('failure paths: unknown addon 404, unknown provider or plan 422, missing root 422, foreign app 404', async () => {
    expect((await h.call('GET', `/v1/apps/${app.name}/addons/ad-nope`)).body).toEqual({
      resource: 'addon',
      error: 'not found',
    });
    expect((await h.call('DELETE', `/v1/apps/${app.name}/addons/ad-nope`)).status).toBe(404);
    expect(
      (
        await h.call('POST', `/v1/apps/${app.name}/addons`, {
          body: { addon: { addon_provider_id: 'nope', plan_id: 'x' } },
        })
      ).body.errors,
    ).toHaveProperty('addon_provider_id');
    expect(
      (
        await h.call('POST', `/v1/apps/${app.name}/addons`, {
          body: { addon: { addon_provider_id: 'scalingo-redis', plan_id: 'x' } },
        })
      ).body.errors,
    ).toHaveProperty('plan_id');
    expect((await h.call('POST', `/v1/apps/${app.name}/addons`, { body: {} })).body).toEqual({
      errors: { addon: ['missing field'] },
    });
    expect((await h.call('GET', `/v1/apps/${app.name}/addons`, { as: 'other' })).status).toBe(404);
    expect((await h.call('GET', '/v1/addon_providers/nope/plans')).status).toBe(404);
  });
});
