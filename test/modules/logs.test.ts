import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { containerOf, createApp, logsUrl, messageOf, readLogs } from '../support/logs.ts';

// Logs service with an in-memory runtime: #20 URL, #22 text mode, filters, auth of the URL.
const LINE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,9})? \+0000 UTC \[[a-z0-9-]+\] /;

describe('logs (#20, #22 text)', () => {
  const fake = new FakeLogsRuntime();
  let h: Harness;
  let app: { id: string; name: string };
  let web1: string;
  let web2: string;
  let worker1: string;

  beforeAll(async () => {
    h = await startEmulator({}, { runtime: fake });
    app = await createApp(h, 'logs-text-app');
    const base = { instanceId: h.emu.instanceId, appId: app.id, appName: app.name };
    web1 = fake.add({ ...base, type: 'web', index: 1 });
    web2 = fake.add({ ...base, type: 'web', index: 2 });
    worker1 = fake.add({ ...base, type: 'worker', index: 1 });
    await eventually(() => fake.followerCount(web1) && fake.followerCount(web2) && fake.followerCount(worker1), {
      what: 'followers',
    });
    for (let i = 1; i <= 50; i++) fake.print(web1, `line-${i}`);
    for (let i = 1; i <= 5; i++) fake.print(web2, `w2-${i}`, 'stderr');
    for (let i = 1; i <= 5; i++) fake.print(worker1, `job-${i}`);
    const one = fake.add({ ...base, type: 'one-off', index: 7 });
    await eventually(() => fake.followerCount(one), { what: 'one-off follower' });
    fake.print(one, 'detached output');
  });
  afterAll(() => h.stop());

  it('#20 gives a signed logs_url on the emulator port that already has a query string', async () => {
    const r = await h.call('GET', `/v1/apps/${app.name}/logs`);
    expect(r.status).toBe(200);
    expect(r.body.app).toMatchObject({ id: app.id, name: app.name });
    const u = new URL(r.body.logs_url);
    expect(`${u.protocol}//${u.host}`).toBe(h.api);
    expect(u.pathname).toBe(`/apps/${app.name}/logs`);
    expect(u.searchParams.get('token')).toBeTruthy();
    expect(u.searchParams.get('timestamp')).toMatch(/^\d+$/);
  });

  it('#20 failure paths: unknown or foreign app 404, no credentials 401', async () => {
    expect((await h.call('GET', '/v1/apps/nope-nope/logs')).body).toEqual({ resource: 'app', error: 'not found' });
    expect((await h.call('GET', `/v1/apps/${app.name}/logs`, { as: 'other' })).status).toBe(404);
    expect((await h.call('GET', `/v1/apps/${app.name}/logs`, { as: null })).status).toBe(401);
  });

  it('returns exactly the last n lines, in order, in the platform format', async () => {
    const url = await logsUrl(h, app.name);
    await eventually(async () => (await readLogs(url, { n: 1000 })).lines.length === 61, { what: '61 lines stored' });
    const r = await readLogs(url, { n: 10, filter: 'web-1' });
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/^text\/plain/);
    expect(r.lines.map(messageOf)).toEqual(Array.from({ length: 10 }, (_, i) => `line-${41 + i}`));
    for (const l of r.lines) expect(l).toMatch(LINE);
    expect(r.text.endsWith('\n')).toBe(true);
    // Without n: the CLI's default of 20.
    expect((await readLogs(url, { filter: 'web-1' })).lines).toHaveLength(20);
    // n larger than the history: everything there is.
    expect((await readLogs(url, { n: 500 })).lines).toHaveLength(61);
  });

  it('filters by container name, type, or simple regular expression; empty = all', async () => {
    const url = await logsUrl(h, app.name);
    const containers = async (filter: string) =>
      new Set((await readLogs(url, { n: 1000, filter })).lines.map(containerOf));
    expect(await containers('web-2')).toEqual(new Set(['web-2']));
    expect(await containers('web')).toEqual(new Set(['web-1', 'web-2']));
    expect(await containers('web|worker')).toEqual(new Set(['web-1', 'web-2', 'worker-1']));
    expect(await containers('worker-1|web-2')).toEqual(new Set(['worker-1', 'web-2']));
    expect(await containers('one-off')).toEqual(new Set(['one-off-7']));
    expect(await containers('one-off-7')).toEqual(new Set(['one-off-7']));
    expect(await containers('')).toEqual(new Set(['web-1', 'web-2', 'worker-1', 'one-off-7']));
    // `web-1` does not select web-10 or web-2; an unknown container selects nothing (204, like no log).
    expect((await readLogs(url, { filter: 'postdeploy' })).status).toBe(204);
  });

  it('a bad regular expression is a 400 with a clear message; a bad n too', async () => {
    const url = await logsUrl(h, app.name);
    const r = await readLogs(url, { filter: 'web(' });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toMatch(/invalid filter "web\(".*regular expression/);
    const n = await readLogs(url, { n: 'many' });
    expect(n.status).toBe(400);
    expect(JSON.parse(n.text).error).toMatch(/invalid n/);
  });

  it('the URL is the credential: invalid token, token of another app → 401 {error}', async () => {
    const url = await logsUrl(h, app.name);
    const bad = new URL(url);
    bad.searchParams.set('token', `${app.id}.forged`);
    const r = await readLogs(bad.toString());
    expect(r.status).toBe(401);
    expect(JSON.parse(r.text)).toEqual({ error: 'invalid logs token' });
    const missing = new URL(url);
    missing.search = '';
    expect((await readLogs(missing.toString())).status).toBe(401);
    const other = await createApp(h, 'logs-other-app');
    const otherUrl = new URL(await logsUrl(h, other.name));
    const swapped = new URL(url);
    swapped.searchParams.set('token', otherUrl.searchParams.get('token')!);
    swapped.searchParams.set('timestamp', otherUrl.searchParams.get('timestamp')!);
    expect((await readLogs(swapped.toString())).status).toBe(401);
    // A moved timestamp breaks the signature.
    const moved = new URL(url);
    moved.searchParams.set('timestamp', String(Number(moved.searchParams.get('timestamp')) + 3600));
    expect((await readLogs(moved.toString())).status).toBe(401);
  });

  it('an app with no line answers 204 (the CLI prints "There is no log")', async () => {
    const quiet = await createApp(h, 'logs-quiet-app');
    expect((await readLogs(await logsUrl(h, quiet.name))).status).toBe(204);
  });

  it('append(): router lines are kept only when router_logs is on', async () => {
    const r = await createApp(h, 'logs-router-app');
    expect(h.emu.area('logs').append(r.id, 'router', 'method=GET path="/" status=200')).toBe(false);
    expect((await h.call('PATCH', `/v1/apps/${r.name}`, { body: { app: { router_logs: true } } })).status).toBe(200);
    expect(h.emu.area('logs').append(r.id, 'router', 'method=GET path="/x" status=404')).toBe(true);
    h.emu.area('logs').append(r.id, 'web-1', 'from another area');
    await h.emu.area('logs').pipeline.idle();
    const lines = (await readLogs(await logsUrl(h, r.name), { n: 10 })).lines;
    expect(lines.map((l) => `${containerOf(l)} ${messageOf(l)}`)).toEqual([
      'router method=GET path="/x" status=404',
      'web-1 from another area',
    ]);
  });
});

describe('logs URL expiry', () => {
  it('a logs_url older than logs.urlTtlMs → 401; a fresh one works', async () => {
    const clock = new ManualClock();
    const h = await startEmulator({ logs: { urlTtlMs: 60_000 } }, { clock, runtime: new FakeLogsRuntime() });
    try {
      const app = await createApp(h, 'logs-expiry-app');
      h.emu.area('logs').append(app.id, 'web-1', 'hello');
      await h.emu.area('logs').pipeline.idle();
      const url = await logsUrl(h, app.name);
      expect((await readLogs(url)).status).toBe(200);
      clock.advance(61_000);
      const r = await readLogs(url);
      expect(r.status).toBe(401);
      expect(JSON.parse(r.text).error).toMatch(/expired/);
      expect((await readLogs(await logsUrl(h, app.name))).lines.map(messageOf)).toEqual(['hello']);
    } finally {
      await h.stop();
    }
  });
});
