import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { containerOf, createApp, logsUrl, messageOf, openSse, openWs, readLogs } from '../support/logs.ts';

// #22 stream=true over WebSocket and SSE; resuming collection across restarts (in-memory runtime).
describe('logs stream (#22 stream=true)', () => {
  const fake = new FakeLogsRuntime();
  let h: Harness;
  let app: { id: string; name: string };
  let web: string;
  let worker: string;

  beforeAll(async () => {
    h = await startEmulator({ intervals: { logsPingMs: 200 } }, { runtime: fake });
    app = await createApp(h, 'logs-stream-app');
    web = fake.add({ instanceId: h.emu.instanceId, appId: app.id, type: 'web', index: 1 });
    worker = fake.add({ instanceId: h.emu.instanceId, appId: app.id, type: 'worker', index: 1 });
    await eventually(() => fake.followerCount(web) && fake.followerCount(worker), { what: 'followers' });
    for (let i = 1; i <= 10; i++) fake.print(web, `old-${i}`);
    await eventually(async () => (await readLogs(await logsUrl(h, app.name), { n: 100 })).lines.length === 10, {
      what: 'history',
    });
  });
  afterAll(() => h.stop());

  it('WebSocket: 101, history (n) first, then live lines, and pings', async () => {
    const c = await openWs(await logsUrl(h, app.name), '&n=3');
    try {
      await eventually(() => c.lines.length >= 3, { what: 'history over ws' });
      fake.print(web, 'live-1');
      fake.print(worker, 'live-2', 'stderr');
      await eventually(() => c.lines.length >= 5, { what: 'live lines over ws' });
      expect(c.lines.map(messageOf)).toEqual(['old-8', 'old-9', 'old-10', 'live-1', 'live-2']);
      expect(c.lines.map(containerOf)).toEqual(['web-1', 'web-1', 'web-1', 'web-1', 'worker-1']);
      await eventually(() => c.pings >= 2, { what: 'pings' });
      const log = c.events.find((e) => e.event === 'log')!;
      const ping = c.events.find((e) => e.event === 'ping')!;
      expect(log).toMatchObject({ event: 'log', name: 'log' });
      expect(ping).toMatchObject({ event: 'ping', name: 'ping' });
      // RFC 3339 timestamps (the Go CLI decodes them into time.Time).
      expect(String(ping.timestamp)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      expect(String(log.timestamp)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    } finally {
      c.close();
    }
  });

  it('WebSocket like the Go CLI: no n → no history replay; raw filter appended', async () => {
    const c = await openWs(await logsUrl(h, app.name), '&filter=worker');
    try {
      fake.print(web, 'not-for-worker-filter');
      fake.print(worker, 'for-worker-filter');
      await eventually(() => c.lines.length >= 1, { what: 'filtered live line' });
      await h.emu.area('logs').pipeline.idle();
      expect(c.lines.map(messageOf)).toEqual(['for-worker-filter']);
    } finally {
      c.close();
    }
  });

  it('WebSocket refused: bad token 401, bad filter 400, stream missing 400, wrong path 404', async () => {
    const url = await logsUrl(h, app.name);
    const forged = url.replace(/token=[^&]+/, `token=${app.id}.forged`);
    await expect(openWs(forged)).rejects.toMatchObject({ status: 401 });
    await expect(openWs(url, '&filter=(')).rejects.toMatchObject({ status: 400 });
    const noStream = new WebSocket(url.replace(/^http/, 'ws'));
    const status = await new Promise<number>((r) =>
      noStream.once('unexpected-response', (_q, res) => r(res.statusCode!)),
    );
    expect(status).toBe(400);
    await expect(openWs(url.replace('/logs?', '/nothing?'))).rejects.toMatchObject({ status: 404 });
  });

  it('SSE: text/event-stream, history then live lines, pings', async () => {
    const c = await openSse(await logsUrl(h, app.name), '&n=2&filter=web-1');
    try {
      expect(c.status).toBe(200);
      expect(c.type).toMatch(/^text\/event-stream/);
      await eventually(() => c.lines.length >= 2, { what: 'history over sse' });
      fake.print(web, 'sse-live');
      await eventually(() => c.lines.some((l) => messageOf(l) === 'sse-live'), { what: 'live over sse' });
      await eventually(() => c.pings >= 1, { what: 'sse ping' });
      const msgs = c.lines.map(messageOf);
      expect(msgs.slice(msgs.indexOf('sse-live') - 2, msgs.indexOf('sse-live') + 1).length).toBe(3);
      expect(new Set(c.lines.map(containerOf))).toEqual(new Set(['web-1']));
    } finally {
      c.close();
    }
  });

  it('SSE with a bad token is a plain 401, not a stream', async () => {
    const url = (await logsUrl(h, app.name)).replace(/token=[^&]+/, 'token=x.y');
    const c = await openSse(url);
    expect(c.status).toBe(401);
  });

  it('many subscribers each get every line; closing one leaves the others', async () => {
    const url = await logsUrl(h, app.name);
    const clients = await Promise.all([openWs(url), openWs(url), openSse(url), openSse(url)]);
    await eventually(() => h.emu.area('logs').hub.count(app.id) === 4, { what: '4 subscribers' });
    for (let i = 1; i <= 100; i++) fake.print(worker, `fan-${i}`);
    for (const c of clients)
      await eventually(() => c.lines.filter((l) => messageOf(l).startsWith('fan-')).length === 100, {
        what: 'fan-out',
      });
    for (const c of clients)
      expect(c.lines.filter((l) => messageOf(l).startsWith('fan-')).map(messageOf)).toEqual(
        Array.from({ length: 100 }, (_, i) => `fan-${i + 1}`),
      );
    clients[0].close();
    clients[2].close();
    await eventually(() => h.emu.area('logs').hub.count(app.id) === 2, { what: 'closed subscribers removed' });
    fake.print(worker, 'after-close');
    await eventually(
      () =>
        clients[1].lines.some((l) => messageOf(l) === 'after-close') &&
        clients[3].lines.some((l) => messageOf(l) === 'after-close'),
      { what: 'others still served' },
    );
    clients[1].close();
    clients[3].close();
  });
});

describe('collection resumes without loss or duplication', () => {
  it('across a container restart and an emulator restart (same data dir)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'emu-logs-resume-'));
    const fake = new FakeLogsRuntime();
    const cfg = { inMemory: false, dataDir };
    const first = await startEmulator(cfg, { runtime: fake });
    let second: Harness | undefined;
    try {
      const app = await createApp(first, 'logs-resume-app');
      const id = fake.add({ instanceId: first.emu.instanceId, appId: app.id, type: 'web', index: 1 });
      await eventually(() => fake.followerCount(id), { what: 'follower' });
      let n = 0;
      const print = (k: number) => {
        for (let i = 0; i < k; i++) fake.print(id, `n-${++n}`);
      };
      print(20);
      // The container restarts: its stream ends, a new one starts (Docker replays everything since).
      fake.restart(id);
      print(20);
      await eventually(async () => (await readLogs(await logsUrl(first, app.name), { n: 1000 })).lines.length === 40, {
        what: '40 lines',
      });
      await first.stop();
      // While the emulator is down the container keeps printing.
      print(25);
      second = await startEmulator(cfg, { runtime: fake });
      print(15);
      const url = await logsUrl(second, app.name);
      await eventually(async () => (await readLogs(url, { n: 1000 })).lines.length >= 80, { what: '80 lines' });
      await second.emu.area('logs').pipeline.idle();
      const lines = (await readLogs(url, { n: 1000 })).lines.map(messageOf);
      expect(lines).toEqual(Array.from({ length: 80 }, (_, i) => `n-${i + 1}`));
    } finally {
      await second?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('lines with the very same timestamp are neither lost nor doubled at the resume point', async () => {
    const { resumeFilter } = await import('../../src/modules/logs/logs.collector.ts');
    const ts = '2024-01-01T00:00:00.000000001Z';
    const skip = resumeFilter({ lastTs: ts, lastTexts: ['a', 'a'] });
    const replay = [
      ['2024-01-01T00:00:00.000000000Z', 'x'],
      [ts, 'a'],
      [ts, 'a'],
      [ts, 'b'],
      ['2024-01-01T00:00:00.000000002Z', 'a'],
    ].filter(([t, text]) => !skip(t, text));
    expect(replay).toEqual([
      [ts, 'b'],
      ['2024-01-01T00:00:00.000000002Z', 'a'],
    ]);
  });
});
