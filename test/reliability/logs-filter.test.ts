import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { containerOf, createApp, logsUrl, openWs, readLogs } from '../support/logs.ts';

// `filter=(a+)+b` against a long process type: with a backtracking engine this takes 2^64 steps
// and freezes the whole process (health included). With RE2 (linear time) the answer comes, is
// right, and other requests are served alongside. No timing is asserted: a freeze would make the
// requests below never complete, and the test fails on its timeout.
const LONG_TYPE = 'a'.repeat(64);

describe('logs filter: linear-time matching, bounded length', () => {
  const fake = new FakeLogsRuntime();
  let h: Harness;
  let url: string;

  beforeAll(async () => {
    h = await startEmulator({}, { runtime: fake });
    const app = await createApp(h, 'filter-app');
    const base = { instanceId: h.emu.instanceId, appId: app.id, appName: app.name };
    const long = fake.add({ ...base, type: LONG_TYPE, index: 1 });
    const web = fake.add({ ...base, type: 'web', index: 1 });
    const worker = fake.add({ ...base, type: 'worker', index: 2 });
    await eventually(() => fake.followerCount(long) && fake.followerCount(web) && fake.followerCount(worker), {
      what: 'followers',
    });
    fake.print(long, 'from the long type');
    fake.print(web, 'from web');
    fake.print(worker, 'from worker');
    url = await logsUrl(h, app.name);
    await eventually(async () => (await readLogs(url, { n: 10 })).lines.length === 3, {
      what: 'the three lines stored',
    });
  });
  afterAll(() => h.stop());

  it('(a+)+b against a 64-character process type: answered (204, nothing matches) while health is served alongside', async () => {
    const [filtered, health, again] = await Promise.all([
      readLogs(url, { n: 100, filter: '(a+)+b' }),
      fetch(`${h.api}/_emulator/health`),
      readLogs(url, { n: 100, filter: '(a|aa)+' }),
    ]);
    expect(filtered.status).toBe(204);
    expect(health.status).toBe(200);
    expect(again.lines.map(containerOf)).toEqual([`${LONG_TYPE}-1`]);
    // The same patterns on a live stream: the subscription is made, and only matching lines come.
    const ws = await openWs(url, '&filter=(a%2B)%2Bb');
    const wsLong = await openWs(url, `&filter=${encodeURIComponent('(a+)+')}`);
    fake.print(
      [...fake.containers.values()].find((c) => c.info.labels['io.scalingo-emulator.type'] === LONG_TYPE)!.info
        .engineId,
      'live long',
    );
    await eventually(() => wsLong.lines.length === 1, { what: 'the live line through (a+)+' });
    expect(ws.lines).toEqual([]);
    ws.close();
    wsLong.close();
  });

  it('keeps the documented semantics: a name, a type, a simple regular expression; the whole name or type must match', async () => {
    const containers = async (filter: string) =>
      [...new Set((await readLogs(url, { n: 100, filter })).lines.map(containerOf))].sort();
    expect(await containers('web')).toEqual(['web-1']);
    expect(await containers('worker-2')).toEqual(['worker-2']);
    expect(await containers('web|worker')).toEqual(['web-1', 'worker-2']);
    expect(await containers('w.*')).toEqual(['web-1', 'worker-2']);
    expect(await containers('eb')).toEqual([]); // not a substring search
    expect(await containers(`a{64}`)).toEqual([`${LONG_TYPE}-1`]);
  });

  it('refuses what RE2 cannot run in linear time, and filters over 200 characters: 400 {error}', async () => {
    for (const filter of ['(web)\\1', '(?=web)web', '(?<!x)web', 'web(', 'a{1001}', 'x'.repeat(201)]) {
      const r = await readLogs(url, { filter });
      expect(r.status, filter).toBe(400);
      expect(JSON.parse(r.text), filter).toEqual({ error: expect.stringMatching(/^invalid filter/) });
    }
    expect((await readLogs(url, { n: 100, filter: `web|${'x'.repeat(195)}` })).status).toBe(200); // 199 characters
  });
});
