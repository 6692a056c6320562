import { readdirSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { createApp, logsUrl, messageOf, readLogs } from '../support/logs.ts';

// Rotation while lines flow runs in the background, a slice a tick (archives.ts): whatever the
// interleaving with a synchronous pass, archives + history hold every line exactly once, in order.
async function archivedThenHistory(h: Harness, app: { id: string; name: string }): Promise<string[]> {
  const files = readdirSync(h.emu.area('logs').archiver.dir).filter((x) => x.startsWith(`${app.id}-`));
  // Archive rows in order (the API lists newest first: reversed here); one file each, no stray file.
  const rows: string[] = [];
  let cursor = '';
  for (;;) {
    const r = await h.call('GET', `/v1/apps/${app.name}/logs_archives${cursor ? `?cursor=${cursor}` : ''}`);
    expect(r.status).toBe(200);
    rows.push(...(r.body.archives as { url: string }[]).map((a) => a.url));
    if (!r.body.has_more) break;
    cursor = r.body.next_cursor;
  }
  expect(rows).toHaveLength(files.length);
  const lines: string[] = [];
  for (const url of rows.reverse())
    lines.push(
      ...gunzipSync(Buffer.from(await (await fetch(url)).arrayBuffer()))
        .toString('utf8')
        .trimEnd()
        .split('\n')
        .map(messageOf),
    );
  const history = (await readLogs(await logsUrl(h, app.name), { n: 10_000 })).lines.map(messageOf);
  return [...lines, ...history];
}

const expected = (n: number) => Array.from({ length: n }, (_, i) => `l-${i + 1}`);

describe('logs rotation in the background', () => {
  it('a flood rotates on its own, in slices: every line once, in order; the history stays near its bound', async () => {
    const clock = new ManualClock();
    const h = await startEmulator(
      { logs: { historyMaxLines: 1_000, archivesMaxPerApp: 1_000, maintenanceMs: 3_600_000 } },
      { clock, runtime: new FakeLogsRuntime() },
    );
    try {
      const app = await createApp(h, 'logs-bg-flood');
      // 5,000 lines in batches, as a flood arrives: rotation starts from the pipeline, not from maintain().
      for (let i = 1; i <= 5_000; i++) {
        h.emu.area('logs').append(app.id, 'web-1', `l-${i}`, clock.now());
        if (i % 250 === 0) await h.emu.area('logs').pipeline.idle();
      }
      await h.emu.area('logs').pipeline.idle();
      // Settled: a pass now (joining one under way) finds nothing left to do.
      await eventually(
        async () =>
          (await h.emu.area('logs').archiver.rotateInBackground()).length === 0 && !h.emu.area('logs').archiver.busy(),
        { what: 'background rotation to settle' },
      );
      expect(await archivedThenHistory(h, app)).toEqual(expected(5_000));
      const history = (await readLogs(await logsUrl(h, app.name), { n: 10_000 })).lines;
      expect(history.length).toBeLessThanOrEqual(2_000);
      expect(readdirSync(h.emu.area('logs').archiver.dir).length).toBeGreaterThan(0);
    } finally {
      await h.stop();
    }
  });

  it('a synchronous pass during a background one: nothing repeated, nothing lost', async () => {
    const clock = new ManualClock();
    const h = await startEmulator(
      { logs: { historyMaxLines: 2_000, archivesMaxPerApp: 1_000, maintenanceMs: 3_600_000 } },
      { clock, runtime: new FakeLogsRuntime() },
    );
    try {
      const app = await createApp(h, 'logs-bg-sync');
      // Under the flood trigger (one history's worth), over the bound: only explicit passes rotate.
      for (let i = 1; i <= 1_900; i++) h.emu.area('logs').append(app.id, 'web-1', `l-${i}`, clock.now());
      await h.emu.area('logs').pipeline.idle();
      for (let i = 1_901; i <= 3_000; i++) h.emu.area('logs').append(app.id, 'web-1', `l-${i}`, clock.now());
      await h.emu.area('logs').pipeline.idle();
      const background = h.emu.area('logs').archiver.rotateInBackground();
      expect(h.emu.area('logs').archiver.busy()).toBe(true);
      // One slice read, then the synchronous pass: the background one is cancelled, its file not kept.
      await new Promise((r) => setImmediate(r));
      h.emu.area('logs').maintain();
      await background;
      expect(h.emu.area('logs').archiver.busy()).toBe(false);
      expect(await archivedThenHistory(h, app)).toEqual(expected(3_000));

      // And a background pass that got as far as deleting in slices, finished by a synchronous one.
      for (let i = 3_001; i <= 6_000; i++) h.emu.area('logs').append(app.id, 'web-1', `l-${i}`, clock.now());
      await h.emu.area('logs').pipeline.idle();
      const second = h.emu.area('logs').archiver.rotateInBackground();
      await eventually(
        () => readdirSync(h.emu.area('logs').archiver.dir).length > 1 || !h.emu.area('logs').archiver.busy(),
        { what: 'the background archive file', intervalMs: 1 },
      );
      h.emu.area('logs').maintain();
      await second;
      await h.emu.area('logs').archiver.rotateInBackground();
      expect(await archivedThenHistory(h, app)).toEqual(expected(6_000));
    } finally {
      await h.stop();
    }
  });

  it('the maintenance timer rotates by age and removes what deleted apps left, in the background', async () => {
    const clock = new ManualClock();
    const h = await startEmulator(
      { logs: { historyMaxLines: 1_000, historyMaxAgeMs: 60_000, maintenanceMs: 10_000 } },
      { clock, runtime: new FakeLogsRuntime() },
    );
    try {
      const app = await createApp(h, 'logs-bg-age');
      const gone = await createApp(h, 'logs-bg-gone');
      for (let i = 1; i <= 300; i++) h.emu.area('logs').append(app.id, 'web-1', `l-${i}`, clock.now());
      for (let i = 1; i <= 1_500; i++) h.emu.area('logs').append(gone.id, 'web-1', `g-${i}`, clock.now());
      await h.emu.area('logs').pipeline.idle();
      await eventually(
        () =>
          !h.emu.area('logs').archiver.busy() &&
          readdirSync(h.emu.area('logs').archiver.dir).some((f) => f.startsWith(gone.id)),
        { what: 'the other app rotated' },
      );
      expect((await h.call('DELETE', `/v1/apps/${gone.name}?current_name=${gone.name}`)).status).toBe(204);
      // Past the age bound: the timer's pass archives the expired lines and sweeps the deleted app.
      clock.advance(70_000);
      await eventually(async () => (await readLogs(await logsUrl(h, app.name))).status === 204, {
        what: 'the history to expire',
      });
      await eventually(() => !h.emu.area('logs').archiver.busy(), { what: 'the background pass to end' });
      expect(await archivedThenHistory(h, app)).toEqual(expected(300));
      const files = readdirSync(h.emu.area('logs').archiver.dir);
      expect(files.filter((f) => f.startsWith(gone.id))).toEqual([]);
      expect(files.filter((f) => f.startsWith(app.id)).length).toBeGreaterThan(0);
      const count = (h.emu.db as unknown as { prepare(s: string): { pluck(): { get(...a: unknown[]): number } } })
        .prepare('SELECT COALESCE(SUM(count), 0) FROM log_chunks WHERE app_id = ?')
        .pluck();
      expect(count.get(gone.id)).toBe(0);
    } finally {
      await h.stop();
    }
  });
});
