import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { createApp } from '../support/logs.ts';

// One local drain transport (the file transport, transports/file.ts) end to end with the in-memory runtime: the
// drain is stored under the transport's name, and a container's lines reach the file the dispatcher reserves for the
// drain, <state>/drains/<id>.log, found with `dispatcher.fileOf(id)`. The template for a new `reach: 'local'`
// transport (CONTRIBUTING.md "Add a drain transport"; a network transport copies drain-transport-udp.test.ts):
// copy this file and make the drain `{ type: 'syslog', token: 'tok', host: '<your scheme>://127.0.0.1', port: '514' }`
// (a syslog drain needs a valid host and port even though a local transport uses neither), then expect your
// transport's name in `transport`, its url and your format's lines.
describe('drain transport: file (local)', () => {
  const fake = new FakeLogsRuntime();
  let h: Harness;

  beforeAll(async () => {
    h = await startEmulator({}, { runtime: fake });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('a drain type without a syslog endpoint is stored as the file transport; a container’s lines reach its file', async () => {
    const app = await createApp(h, 'file-transport-app');
    const drain = { type: 'datadog', token: 'dd', drain_region: 'eu' };
    const r = await h.call('POST', `/v1/apps/${app.name}/log_drains`, { body: { drain } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.drain.url).toBe('datadog://dd?region=eu');

    // The answer carries no id: the row gives it, and the transport the drain was stored under.
    const row = h.emu.db
      .prepare<[string], { id: string; transport: string }>('SELECT id, transport FROM log_drains WHERE app_id = ?')
      .get(app.id);
    expect(row?.transport).toBe('file');
    const file = h.emu.area('logs').dispatcher.fileOf(row?.id ?? '');
    const read = () => (existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n') : []);

    const web = fake.add({ instanceId: h.emu.instanceId, appId: app.id, type: 'web', index: 1 });
    await eventually(() => fake.followerCount(web), { what: 'the collector following the container' });
    fake.print(web, 'first');
    fake.print(web, 'second', 'stderr');
    await eventually(() => read().length >= 2, { what: 'two lines in the drain file' });
    const lines = read();
    expect(lines).toHaveLength(2);
    expect(lines.map((l) => l.replace(/^\S+ \S+ \+0000 UTC /, ''))).toEqual(['[web-1] first', '[web-1] second']);
  });
});
