import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { createApp, logsUrl, messageOf, readLogs } from '../support/logs.ts';

// #21: history rotates into gzip archives; list by cursor or page; signed downloads that expire.
describe('logs archives (#21)', () => {
  const clock = new ManualClock();
  let h: Harness;
  let app: { id: string; name: string };

  beforeAll(async () => {
    h = await startEmulator(
      { logs: { historyMaxLines: 40, archivesPerPage: 2, archiveUrlTtlMs: 60 * 60_000, maintenanceMs: 3_600_000 } },
      { clock, runtime: new FakeLogsRuntime() },
    );
    app = await createApp(h, 'logs-archive-app');
    // 5 rounds of 40 lines, each over the bound: each rotation archives the oldest lines.
    let n = 0;
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 40; i++) h.emu.area('logs').append(app.id, 'web-1', `a-${++n}`, clock.now());
      await h.emu.area('logs').pipeline.idle();
      h.emu.area('logs').maintain();
      clock.advance(1000);
    }
  });
  afterAll(() => h.stop());

  it('keeps the newest lines in the history and the older ones in gzip archives, none lost', async () => {
    const history = (await readLogs(await logsUrl(h, app.name), { n: 1000 })).lines.map(messageOf);
    expect(history.length).toBeLessThanOrEqual(40);
    expect(history[history.length - 1]).toBe('a-200');
    // Every archive downloaded, oldest first, then the history: exactly a-1 … a-200.
    const all: string[] = [];
    let cursor = '';
    const pages: { url: string; size: number; from: string; to: string }[][] = [];
    for (;;) {
      const r = await h.call('GET', `/v1/apps/${app.name}/logs_archives${cursor ? `?cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      pages.push(r.body.archives);
      if (!r.body.has_more) {
        expect(r.body.next_cursor).toBe('');
        break;
      }
      expect(typeof r.body.next_cursor).toBe('string');
      cursor = r.body.next_cursor;
    }
    expect(pages[0]).toHaveLength(2);
    const archives = pages.flat().reverse();
    expect(archives.length).toBeGreaterThanOrEqual(3);
    for (const a of archives) {
      expect(a.from).toMatch(/^[A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \+0000 UTC \d{4}$/);
      const res = await fetch(a.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/gzip');
      const body = Buffer.from(await res.arrayBuffer());
      expect(body.length).toBe(a.size);
      all.push(...gunzipSync(body).toString('utf8').trimEnd().split('\n').map(messageOf));
    }
    expect([...all, ...history]).toEqual(Array.from({ length: 200 }, (_, i) => `a-${i + 1}`));
  });

  it('page (Go CLI) gives the same slices as the cursor', async () => {
    const p1 = (await h.call('GET', `/v1/apps/${app.name}/logs_archives?page=1`)).body;
    const p2 = (await h.call('GET', `/v1/apps/${app.name}/logs_archives?page=2`)).body;
    const c2 = (await h.call('GET', `/v1/apps/${app.name}/logs_archives?cursor=${p1.next_cursor}`)).body;
    const ids = (b: { archives: { url: string }[] }) => b.archives.map((a) => new URL(a.url).pathname);
    expect(ids(p2)).toEqual(ids(c2));
    expect(ids(p1)).not.toEqual(ids(p2));
  });

  it('failure paths: bad cursor or page, foreign app, unauthenticated', async () => {
    expect((await h.call('GET', `/v1/apps/${app.name}/logs_archives?cursor=abc`)).status).toBe(400);
    expect((await h.call('GET', `/v1/apps/${app.name}/logs_archives?page=x`)).status).toBe(422);
    expect((await h.call('GET', `/v1/apps/${app.name}/logs_archives`, { as: 'other' })).body).toEqual({
      resource: 'app',
      error: 'not found',
    });
    expect((await h.call('GET', `/v1/apps/${app.name}/logs_archives`, { as: null })).status).toBe(401);
  });

  it('download URLs are signed: forged → 403, another app → 404, expired after the TTL → 403', async () => {
    const a = (await h.call('GET', `/v1/apps/${app.name}/logs_archives`)).body.archives[0];
    const forged = new URL(a.url);
    forged.searchParams.set('token', `${forged.pathname.split('/').pop()}.AAAA`);
    expect((await fetch(forged)).status).toBe(403);
    const other = await createApp(h, 'logs-archive-other');
    const elsewhere = new URL(a.url);
    elsewhere.pathname = elsewhere.pathname.replace(app.name, other.name);
    const r404 = await fetch(elsewhere);
    expect(r404.status).toBe(404);
    expect(await r404.json()).toEqual({ resource: 'logs_archive', error: 'not found' });
    clock.advance(61 * 60_000);
    const expired = await fetch(a.url);
    expect(expired.status).toBe(403);
    expect((await expired.json()).error).toMatch(/expired/);
    // A fresh list gives working URLs again.
    const fresh = (await h.call('GET', `/v1/apps/${app.name}/logs_archives`)).body.archives[0];
    expect((await fetch(fresh.url)).status).toBe(200);
  });

  it('an app without archives lists none', async () => {
    const empty = await createApp(h, 'logs-archive-empty');
    expect((await h.call('GET', `/v1/apps/${empty.name}/logs_archives`)).body).toEqual({
      next_cursor: '',
      has_more: false,
      archives: [],
    });
  });
});

describe('archive retention and in-memory state dir', () => {
  it('keeps archivesMaxPerApp files, rotates by age; the temp dir goes away on stop', async () => {
    const clock = new ManualClock();
    const h = await startEmulator(
      { logs: { historyMaxLines: 10, archivesMaxPerApp: 2, historyMaxAgeMs: 60_000, maintenanceMs: 3_600_000 } },
      { clock, runtime: new FakeLogsRuntime() },
    );
    const dir = h.emu.area('logs').archiver.dir;
    try {
      const app = await createApp(h, 'logs-retention-app');
      for (let round = 0; round < 4; round++) {
        for (let i = 0; i < 12; i++) h.emu.area('logs').append(app.id, 'web-1', `r${round}-${i}`, clock.now());
        await h.emu.area('logs').pipeline.idle();
        h.emu.area('logs').maintain();
      }
      expect(readdirSync(dir).filter((f) => f.startsWith(app.id))).toHaveLength(2);
      expect((await h.call('GET', `/v1/apps/${app.name}/logs_archives`)).body.archives).toHaveLength(2);
      // Age: everything older than historyMaxAgeMs leaves the history.
      clock.advance(120_000);
      h.emu.area('logs').maintain();
      expect((await readLogs(await logsUrl(h, app.name))).status).toBe(204);
    } finally {
      await h.stop();
    }
    expect(existsSync(join(dir, '..'))).toBe(false);
  });
});
