import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { createApp } from '../support/logs.ts';
import { type Receiver, udpSyslogServer } from '../support/syslog-servers.ts';

// One drain transport (UDP, transports/udp.ts) end to end with the in-memory runtime: its URL scheme
// chooses it, a container's lines reach a real receiver on 127.0.0.1. The template for a new transport
// (CONTRIBUTING.md "Add a drain transport"): copy this file, swap the receiver for one of yours
// (test/support/syslog-servers.ts shows how to write one), the scheme and what you expect to receive.
describe('drain transport: udp', () => {
  const fake = new FakeLogsRuntime();
  let h: Harness;
  let rx: Receiver;

  beforeAll(async () => {
    h = await startEmulator({}, { runtime: fake });
    rx = await udpSyslogServer();
  });
  afterAll(async () => {
    await h.stop();
    await rx.close();
  });

  it('the target url scheme chooses the transport; a container’s lines reach the receiver', async () => {
    const app = await createApp(h, 'udp-transport-app');
    const drain = { type: 'syslog', token: 'tok', host: 'udp://127.0.0.1', port: String(rx.port) };
    const r = await h.call('POST', `/v1/apps/${app.name}/log_drains`, { body: { drain } });
    expect(r.status, r.text).toBe(201);
    // The url names the transport the scheme chose.
    expect(r.body.drain.url).toBe(`syslog+udp://:tok@127.0.0.1:${rx.port}`);

    const web = fake.add({ instanceId: h.emu.instanceId, appId: app.id, type: 'web', index: 1 });
    await eventually(() => fake.followerCount(web), { what: 'the collector following the container' });
    fake.print(web, 'first');
    fake.print(web, 'second', 'stderr');
    await eventually(() => rx.messages.length >= 2, { what: 'two datagrams at the receiver' });
    expect(rx.errors).toEqual([]);
    expect(rx.messages.map((m) => [m.appName, m.procId, m.msg])).toEqual([
      [app.name, 'web-1', 'first'],
      [app.name, 'web-1', 'second'],
    ]);
    expect(rx.messages[0].sd).toContain('token="tok"');
  });
});
