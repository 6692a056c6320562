import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { createApp, logsUrl, messageOf, readLogs } from '../support/logs.ts';

// Log collection when the engine's streams are cut (issue #10, defect 4): a cut stream of a running
// container is reopened; an engine outage ends every stream and collection resumes on the runtime's
// 'up', from each container's cursor — every line once.
describe('log collection across cut streams and engine outages', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  async function setup() {
    const fake = new FakeLogsRuntime();
    h = await startEmulator({}, { runtime: fake });
    const app = await createApp(h, 'logs-resume-app');
    const web = fake.add({ instanceId: h.emu.instanceId, appId: app.id, appName: app.name, type: 'web', index: 1 });
    await eventually(() => fake.followerCount(web), { what: 'a follower' });
    const url = await logsUrl(h, app.name);
    const history = async () => (await readLogs(url, { n: 1000 })).lines.map(messageOf);
    return { fake, web, history };
  }

  it('reopens a cut stream of a running container: lines printed meanwhile arrive once', async () => {
    const { fake, web, history } = await setup();
    for (let i = 1; i <= 10; i++) fake.print(web, `n-${i}`);
    await eventually(async () => (await history()).length === 10, { what: 'the first lines' });
    fake.cut(web);
    for (let i = 11; i <= 20; i++) fake.print(web, `n-${i}`);
    await eventually(() => fake.followerCount(web), { what: 'the stream reopened' });
    for (let i = 21; i <= 25; i++) fake.print(web, `n-${i}`);
    const got = await eventually(
      async () => {
        const lines = await history();
        return lines.length >= 25 ? lines : null;
      },
      { what: 'every line' },
    );
    expect(got).toEqual(Array.from({ length: 25 }, (_, i) => `n-${i + 1}`));
  });

  it('resumes every container when the engine is back, from its cursor', async () => {
    const { fake, web, history } = await setup();
    for (let i = 1; i <= 10; i++) fake.print(web, `n-${i}`);
    await eventually(async () => (await history()).length === 10, { what: 'the first lines' });
    fake.engine('down');
    for (let i = 11; i <= 20; i++) fake.print(web, `n-${i}`); // the container goes on, the engine keeps its output
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.followerCount(web)).toBe(0); // nothing follows while the engine is unreachable
    fake.engine('up');
    const got = await eventually(
      async () => {
        const lines = await history();
        return lines.length >= 20 ? lines : null;
      },
      { what: 'the lines printed during the outage' },
    );
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => `n-${i + 1}`));
    expect(fake.followerCount(web)).toBe(1);
  });

  it('a follow that fails on an engine error (a timeout under load) is retried while the container runs', async () => {
    const fake = new FlakyLogsRuntime();
    h = await startEmulator({}, { runtime: fake });
    const app = await createApp(h, 'logs-flaky-app');
    fake.failures = 2; // the first two logs() calls fail: the start event's follow and its first retry
    const web = fake.add({ instanceId: h.emu.instanceId, appId: app.id, appName: app.name, type: 'web', index: 1 });
    for (let i = 1; i <= 5; i++) fake.print(web, `n-${i}`);
    await eventually(() => fake.followerCount(web), { what: 'a follower after the failed calls' });
    expect(fake.failures).toBe(0);
    for (let i = 6; i <= 8; i++) fake.print(web, `n-${i}`);
    const url = await logsUrl(h, app.name);
    const got = await eventually(
      async () => {
        const lines = (await readLogs(url, { n: 1000 })).lines.map(messageOf);
        return lines.length >= 8 ? lines : null;
      },
      { what: 'every line, once' },
    );
    expect(got).toEqual(Array.from({ length: 8 }, (_, i) => `n-${i + 1}`));
  });
});

/** logs() fails `failures` times (an engine timeout), then answers. */
class FlakyLogsRuntime extends FakeLogsRuntime {
  failures = 0;
  override async logs(engineId: string, opts: { follow: boolean; sinceMs?: number; tail?: number }) {
    if (this.failures > 0) {
      this.failures--;
      throw new Error('engine call timed out');
    }
    return super.logs(engineId, opts);
  }
}
