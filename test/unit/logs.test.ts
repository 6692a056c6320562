import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { ApiError } from '../../src/http/errors.ts';
import { formatRfc5424, octetFrame } from '../../src/modules/drains/syslog-format.ts';
import {
  archiveDate,
  compileFilter,
  formatLine,
  newLine,
  normaliseTimestamp,
  type StoredLine,
  timestampFromMs,
} from '../../src/modules/logs/log-line.ts';
import { createLogsHub, type StreamSink } from '../../src/modules/logs/logs.hub.ts';
import { createLogsPipeline } from '../../src/modules/logs/logs.pipeline.ts';
import { createLogsStore } from '../../src/modules/logs/logs.store.ts';
import { createUrlSigner } from '../../src/modules/logs/logs-url.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { STORED_LINES } from '../support/log-chunks.ts';
import { parse5424 } from '../support/syslog-servers.ts';

const silent = pino({ level: 'silent' });

describe('log lines', () => {
  it('normalises Docker timestamps to 9 fractional digits in UTC', () => {
    expect(normaliseTimestamp('2015-02-16T02:02:43.930163178Z')).toBe('2015-02-16T02:02:43.930163178Z');
    expect(normaliseTimestamp('2015-02-16T02:02:43.93Z')).toBe('2015-02-16T02:02:43.930000000Z');
    expect(normaliseTimestamp('2015-02-16T02:02:43Z')).toBe('2015-02-16T02:02:43.000000000Z');
    expect(normaliseTimestamp('2015-02-16T03:02:43.5+01:00')).toBe('2015-02-16T02:02:43.500000000Z');
    expect(normaliseTimestamp('yesterday')).toBeNull();
    expect(timestampFromMs(Date.UTC(2020, 0, 2, 3, 4, 5, 6))).toBe('2020-01-02T03:04:05.006000000Z');
  });

  it('formats like Go time.Time.String() then [container] message (4 date tokens)', () => {
    expect(
      formatLine({ ts: '2015-02-16T02:02:43.930163178Z', container: 'web-1', text: '[martini] Started GET /' }),
    ).toBe('2015-02-16 02:02:43.930163178 +0000 UTC [web-1] [martini] Started GET /');
    // Go trims trailing zeros of the fraction, and drops it when zero.
    expect(formatLine({ ts: '2015-02-16T02:02:43.930000000Z', container: 'router', text: 'x' })).toBe(
      '2015-02-16 02:02:43.93 +0000 UTC [router] x',
    );
    expect(formatLine({ ts: '2015-02-16T02:02:43.000000000Z', container: 'one-off-3', text: '' })).toBe(
      '2015-02-16 02:02:43 +0000 UTC [one-off-3] ',
    );
    const tokens = formatLine({ ts: '2015-02-16T02:02:43.100000000Z', container: 'web-1', text: 'a b' }).split(' ');
    expect(tokens[4]).toBe('[web-1]');
  });

  it('archive bounds in the platform form', () => {
    expect(archiveDate(Date.UTC(2017, 2, 24, 14, 0, 0))).toBe('Fri Mar 24 14:00:00 +0000 UTC 2017');
  });

  it('filters: name, type, regex; bad regex → 400 ApiError', () => {
    const f = compileFilter('web')!;
    expect(['web-1', 'web-12', 'worker-1', 'webby-1', 'router'].filter(f)).toEqual(['web-1', 'web-12']);
    expect(['web-1', 'web-10', 'web-2'].filter(compileFilter('web-1')!)).toEqual(['web-1']);
    expect(['web-1', 'worker-2', 'clock-1', 'router'].filter(compileFilter('web|worker')!)).toEqual([
      'web-1',
      'worker-2',
    ]);
    expect(['router', 'web-1'].filter(compileFilter('router')!)).toEqual(['router']);
    expect(compileFilter('')).toBeNull();
    expect(compileFilter(undefined)).toBeNull();
    expect(() => compileFilter('[')).toThrow(ApiError);
    try {
      compileFilter('a)');
    } catch (err) {
      expect((err as ApiError).status).toBe(400);
    }
    expect(() => compileFilter('a'.repeat(500))).toThrow(/longer than/);
  });
});

describe('signed URLs', () => {
  it('round-trips, rejects tampering, expires after the TTL', () => {
    const clock = new ManualClock(Date.UTC(2024, 0, 1));
    const s = createUrlSigner({ key: Buffer.alloc(32, 7), clock });
    const q = new URLSearchParams(s.query('logs', 'app-1'));
    expect(s.check('logs', q.get('token')!, q.get('timestamp')!, 60_000)).toEqual({ ok: true, subject: 'app-1' });
    expect(s.check('archive', q.get('token')!, q.get('timestamp')!, 60_000)).toEqual({ ok: false, reason: 'invalid' });
    expect(s.check('logs', q.get('token')!.replace('app-1', 'app-2'), q.get('timestamp')!, 60_000).ok).toBe(false);
    expect(s.check('logs', q.get('token')!, undefined, 60_000).ok).toBe(false);
    clock.advance(61_000);
    expect(s.check('logs', q.get('token')!, q.get('timestamp')!, 60_000)).toEqual({ ok: false, reason: 'expired' });
  });
});

describe('RFC 5424', () => {
  it('formats a well-formed message: PRI, 6-digit time, header fields, escaped SD', () => {
    const m = formatRfc5424({
      ts: '2024-05-01T10:00:00.123456789Z',
      hostname: 'host',
      appName: 'my-app',
      procId: 'web-1',
      stream: 0,
      text: 'hello',
      params: { container: 'web-1', note: 'a "b" ]c\\' },
    });
    expect(m).toBe(
      '<14>1 2024-05-01T10:00:00.123456Z host my-app web-1 log [emulator@32473 container="web-1" note="a \\"b\\" \\]c\\\\"] hello',
    );
    expect(parse5424(m)).toMatchObject({ pri: 14, appName: 'my-app', procId: 'web-1', msg: 'hello' });
    const err = formatRfc5424({
      ts: '2024-05-01T10:00:00.000000000Z',
      hostname: 'h',
      appName: 'an app with spaces',
      procId: '',
      stream: 1,
      text: 'x',
      params: {},
    });
    expect(err.startsWith('<11>1 2024-05-01T10:00:00.000000Z h an_app_with_spaces - log [emulator@32473] x')).toBe(
      true,
    );
  });

  it('octet counting counts bytes, not characters', () => {
    expect(octetFrame('héllo').toString('utf8')).toBe('6 héllo');
  });
});

describe('pipeline back-pressure and drop policy', () => {
  function setup(queueMaxLines: number, batchMaxLines = 3) {
    const db = openDatabase({ inMemory: true });
    const store = createLogsStore(db);
    const pipeline = createLogsPipeline({
      db,
      store,
      clock: new ManualClock(),
      logger: silent,
      queueMaxLines,
      batchMaxLines,
      routerLogsOn: () => true,
    });
    return { db, store, pipeline };
  }
  const line = (i: number, appId = 'a') => newLine(appId, timestampFromMs(1_000 + i), 1_000 + i, 'web-1', 0, `l-${i}`);

  it('container output is never dropped: full() then room() resolves once the queue drains', async () => {
    const { store, pipeline } = setup(5);
    for (let i = 0; i < 8; i++) pipeline.ingest(line(i), 'engine-1');
    expect(pipeline.full()).toBe(true);
    await pipeline.room();
    await pipeline.idle();
    expect(store.last('a', 100).map((l) => l.text)).toEqual(Array.from({ length: 8 }, (_, i) => `l-${i}`));
    // The cursor is stored with the lines: the newest timestamp and its text.
    expect(store.cursor('engine-1')).toMatchObject({ last_ts: line(7).ts, last_texts: JSON.stringify(['l-7']) });
  });

  it('a batch of several statements gives each delivered line the seq it has in the database', async () => {
    const { db, pipeline } = setup(1_000, 500);
    const delivered: StoredLine[] = [];
    pipeline.addSink({ deliver: (lines) => void delivered.push(...lines) });
    pipeline.append('b', 'router', 'other app first'); // seqs do not start at 1 for app a
    for (let i = 0; i < 333; i++) pipeline.ingest(line(i, i % 7 === 0 ? 'b' : 'a'), 'engine-1');
    await pipeline.idle();
    const rows = db.prepare(`SELECT seq, app_id, text FROM (${STORED_LINES}) ORDER BY seq`).all();
    expect(rows).toHaveLength(334);
    expect(delivered.map((l) => ({ seq: l.seq, app_id: l.app_id, text: l.text }))).toEqual(rows);
  });

  it('lines ingested while batches are taken from the middle of the queue are all stored once, in order, the slots let go', async () => {
    const { db, store, pipeline } = setup(100_000, 100);
    let next = 0;
    const ingest = (n: number) => {
      for (let i = 0; i < n; i++, next++) pipeline.ingest(line(next), 'engine-1');
    };
    const batches: number[] = [];
    // Every delivered batch brings 50 more lines: the queue never empties until the end, so batches are taken
    // from its middle and, past 4,096 taken, the queue is compacted.
    pipeline.addSink({
      deliver: (lines) => {
        batches.push(lines.length);
        if (next < 8_000) ingest(50);
      },
    });
    ingest(5_000);
    await pipeline.idle();
    const rows = db.prepare(`SELECT seq, text FROM (${STORED_LINES}) ORDER BY seq`).all() as {
      seq: number;
      text: string;
    }[];
    expect(rows.map((r) => r.text)).toEqual(Array.from({ length: next }, (_, i) => `l-${i}`));
    expect(batches.every((n) => n <= 100)).toBe(true);
    expect(pipeline.queued()).toBe(0);
    expect(store.cursor('engine-1')).toMatchObject({ last_ts: line(next - 1).ts });
  });

  it('appended lines past the bound are dropped and counted', async () => {
    const { store, pipeline } = setup(3);
    const results = Array.from({ length: 5 }, (_, i) => pipeline.append('a', 'router', `r-${i}`));
    expect(results).toEqual([true, true, true, false, false]);
    expect(pipeline.counters.dropped).toBe(2);
    await pipeline.idle();
    expect(store.last('a', 10).map((l) => l.text)).toEqual(['r-0', 'r-1', 'r-2']);
  });
});

describe('hub', () => {
  const stored = (seq: number, container = 'web-1'): StoredLine => ({
    seq,
    app_id: 'a',
    ts: timestampFromMs(seq),
    time_ms: seq,
    container,
    stream: 0,
    text: `m-${seq}`,
  });

  it('a subscriber that cannot keep up is closed; others keep receiving', async () => {
    const hub = createLogsHub({ logger: silent, clock: new ManualClock(), pingMs: 60_000, maxLines: 10 });
    const stuck: StreamSink & { reason?: string } = {
      send: () => new Promise(() => undefined),
      close: (r) => void (stuck.reason = r),
    };
    const got: string[] = [];
    const ok: StreamSink = {
      send: async (m) => void got.push(...(JSON.parse(m).log as string).split('\n')),
      close: () => undefined,
    };
    const a = hub.subscribe('a', null, stuck, []);
    hub.subscribe('a', compileFilter('web'), ok, [stored(1)]);
    // Batches arrive on separate ticks (the pipeline flushes on setImmediate): a live client keeps up.
    for (let i = 2; i <= 30; i++) {
      hub.sink.deliver([stored(i), stored(1000 + i, 'worker-1')]);
      await new Promise((r) => setImmediate(r));
    }
    await a.closed;
    expect(stuck.reason).toMatch(/too slow/);
    expect(hub.counters.cutSlow).toBe(1);
    await new Promise((r) => setImmediate(r));
    expect(got.map((l) => l.split(' ').slice(5).join(' '))).toEqual(Array.from({ length: 30 }, (_, i) => `m-${i + 1}`));
    expect(hub.count('a')).toBe(1);
    hub.closeAll();
    expect(hub.count()).toBe(0);
  });

  it('does not resend lines already in the history', async () => {
    const hub = createLogsHub({ logger: silent, clock: new ManualClock(), pingMs: 60_000, maxLines: 100 });
    const got: string[] = [];
    hub.subscribe('a', null, { send: async (m) => void got.push(JSON.parse(m).log), close: () => undefined }, [
      stored(1),
      stored(2),
    ]);
    hub.sink.deliver([stored(2), stored(3)]);
    await new Promise((r) => setImmediate(r));
    expect(
      got
        .join('\n')
        .split('\n')
        .map((l) => l.split(' ').pop()),
    ).toEqual(['m-1', 'm-2', 'm-3']);
    hub.closeAll();
  });
});
