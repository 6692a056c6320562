import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { createApp } from '../support/logs.ts';
import { closedPort, type Receiver, tcpSyslogServer, udpSyslogServer } from '../support/syslog-servers.ts';

// Drain delivery with an in-memory runtime: syslog over TCP (octet counting) and UDP, files,
// retries with back-off, and isolation of an unreachable drain. Docker-backed: test/docker/logs.test.ts.
describe('drain delivery', () => {
  const fake = new FakeLogsRuntime();
  let h: Harness;
  let tcp: Receiver;
  let udp: Receiver;

  beforeAll(async () => {
    h = await startEmulator({ logs: { drains: { retryMinMs: 50, retryMaxMs: 200 } } }, { runtime: fake });
    tcp = await tcpSyslogServer();
    udp = await udpSyslogServer();
  });
  afterAll(async () => {
    await h.stop();
    await tcp.close();
    await udp.close();
  });

  const addDrain = async (app: string, drain: Record<string, string>, addon?: string) => {
    const r = await h.call('POST', `/v1/apps/${app}${addon ? `/addons/${addon}` : ''}/log_drains`, { body: { drain } });
    expect(r.status, r.text).toBe(201);
    return r.body.drain.url as string;
  };
  const drainFile = (app: string, url: string) => {
    const row = h.emu.db
      .prepare<[string, string], { id: string }>('SELECT id FROM log_drains WHERE app_id = ? AND url = ?')
      .get(app, url)!;
    return h.emu.area('logs').dispatcher.fileOf(row.id);
  };

  it('syslog over TCP and UDP: RFC 5424 frames with the app (APP-NAME) and container (PROCID, SD)', async () => {
    const app = await createApp(h, 'drain-syslog-app');
    await addDrain(app.name, { type: 'syslog', token: 'secret-tok', host: '127.0.0.1', port: String(tcp.port) });
    await addDrain(app.name, { type: 'syslog', token: 'udp-tok', host: 'udp://127.0.0.1', port: String(udp.port) });
    const web = fake.add({ instanceId: h.emu.instanceId, appId: app.id, type: 'web', index: 2 });
    await eventually(() => fake.followerCount(web), { what: 'follower' });
    fake.print(web, 'hello "quoted" ]bracket');
    fake.print(web, 'oops', 'stderr');
    for (const rx of [tcp, udp]) {
      await eventually(() => rx.messages.filter((m) => m.appName === app.name).length >= 2, {
        what: 'syslog messages',
      });
      expect(rx.errors).toEqual([]);
      const [a, b] = rx.messages.filter((m) => m.appName === app.name);
      expect(a).toMatchObject({
        version: '1',
        pri: 14,
        hostname: 'scalingo-emulator',
        appName: app.name,
        procId: 'web-2',
        msgId: 'log',
        msg: 'hello "quoted" ]bracket',
      });
      expect(b).toMatchObject({ pri: 11, procId: 'web-2', msg: 'oops' });
      expect(a.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect(a.sd).toContain(`app="${app.name}"`);
      expect(a.sd).toContain('container="web-2"');
      expect(a.sd).toContain(`app_id="${app.id}"`);
    }
    expect(tcp.messages.find((m) => m.appName === app.name)!.sd).toContain('token="secret-tok"');
  });

  it('a file drain holds every line, one per line, in the platform format', async () => {
    const app = await createApp(h, 'drain-file-app');
    const url = await addDrain(app.name, { type: 'datadog', token: 'dd', drain_region: 'eu' });
    const web = fake.add({ instanceId: h.emu.instanceId, appId: app.id, type: 'worker', index: 1 });
    await eventually(() => fake.followerCount(web), { what: 'follower' });
    for (let i = 1; i <= 500; i++) fake.print(web, `f-${i}`);
    const file = drainFile(app.id, url);
    const read = () => (existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n') : []);
    await eventually(() => read().length === 500, { what: '500 lines in the drain file' });
    const lines = read();
    expect(lines.map((l) => l.split(' ').slice(5).join(' '))).toEqual(
      Array.from({ length: 500 }, (_, i) => `f-${i + 1}`),
    );
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC \[worker-1\] f-1$/);
  });

  it('an unreachable drain is retried with back-off and delays no other drain', async () => {
    const app = await createApp(h, 'drain-isolation-app');
    const dead = await closedPort();
    const deadUrl = await addDrain(app.name, { type: 'syslog', token: 't', host: '127.0.0.1', port: String(dead) });
    const fileUrl = await addDrain(app.name, { type: 'logtail', token: 'lt' });
    await addDrain(app.name, { type: 'papertrail', host: 'tcp://127.0.0.1', port: String(tcp.port) });
    for (let i = 1; i <= 200; i++) h.emu.area('logs').append(app.id, 'web-1', `iso-${i}`);
    const file = drainFile(app.id, fileUrl);
    await eventually(() => existsSync(file) && readFileSync(file, 'utf8').trimEnd().split('\n').length === 200, {
      what: 'file drain complete',
    });
    await eventually(() => tcp.messages.filter((m) => m.appName === app.name).length === 200, {
      what: 'tcp drain complete',
    });
    const deadRow = h.emu.db.prepare<[string], { id: string }>('SELECT id FROM log_drains WHERE url = ?').get(deadUrl)!;
    await eventually(() => (h.emu.area('logs').dispatcher.stats(deadRow.id)?.failures ?? 0) >= 2, {
      what: 'retries of the dead drain',
    });
    const stats = h.emu.area('logs').dispatcher.stats(deadRow.id)!;
    expect(stats.connected).toBe(false);
    expect(stats.queued).toBe(200); // kept for when it comes back
  });

  it('a drain whose receiver comes up later gets the lines queued meanwhile', async () => {
    const app = await createApp(h, 'drain-later-app');
    const port = await closedPort();
    await addDrain(app.name, { type: 'syslog', token: 't', host: '127.0.0.1', port: String(port) });
    for (let i = 1; i <= 20; i++) h.emu.area('logs').append(app.id, 'web-1', `late-${i}`);
    await h.emu.area('logs').pipeline.idle();
    const late = await tcpSyslogServer(port);
    try {
      await eventually(() => late.messages.length === 20, {
        what: 'queued lines delivered after the receiver came up',
      });
      expect(late.messages.map((m) => m.msg)).toEqual(Array.from({ length: 20 }, (_, i) => `late-${i + 1}`));
    } finally {
      await late.close();
    }
  });

  it('a deleted drain stops receiving; addon drains receive nothing (stand-in addons print nothing)', async () => {
    const app = await createApp(h, 'drain-delete-app');
    const url = await addDrain(app.name, { type: 'syslog', token: 'del', host: '127.0.0.1', port: String(tcp.port) });
    const addon = (
      await h.call('POST', `/v1/apps/${app.name}/addons`, {
        body: { addon: { addon_provider_id: 'scalingo-redis', plan_id: 'redis-sandbox' } },
      })
    ).body.addon;
    await addDrain(app.name, { type: 'syslog', token: 'addon', host: '127.0.0.1', port: String(tcp.port) }, addon.id);
    h.emu.area('logs').append(app.id, 'web-1', 'before-delete');
    await eventually(() => tcp.messages.some((m) => m.appName === app.name && m.msg === 'before-delete'), {
      what: 'delivered',
    });
    expect((await h.call('DELETE', `/v1/apps/${app.name}/log_drains?url=${encodeURIComponent(url)}`)).status).toBe(204);
    h.emu.area('logs').append(app.id, 'web-1', 'after-delete');
    // A marker through another drain proves the pipeline moved past the line.
    const other = await createApp(h, 'drain-marker-app');
    await addDrain(other.name, { type: 'syslog', token: 'm', host: '127.0.0.1', port: String(tcp.port) });
    h.emu.area('logs').append(other.id, 'web-1', 'marker');
    await eventually(() => tcp.messages.some((m) => m.appName === other.name && m.msg === 'marker'), {
      what: 'marker',
    });
    const mine = tcp.messages.filter((m) => m.appName === app.name);
    expect(mine.map((m) => m.msg)).toEqual(['before-delete']);
    expect(mine.every((m) => !m.sd.includes('token="addon"'))).toBe(true);
  });
});
