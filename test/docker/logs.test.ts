import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { docker, eventually, giveUp, removeByLabel } from '../support/docker-cli.ts';
import { containerOf, createApp, logsUrl, messageOf, openSse, openWs, readLogs } from '../support/logs.ts';
import { closedPort, tcpSyslogServer, udpSyslogServer } from '../support/syslog-servers.ts';

// Logs of real containers: collection through the Docker runtime, text/WS/SSE, drains, archives.
// Containers are made directly with the emulator's runtime and the logs labels; Docker's own
// `docker logs` is the independent record every result is compared with.
const numbered = (prefix: string, count: number, then = 'sleep 3600') => [
  'sh',
  '-c',
  `i=0; while [ $i -lt ${count} ]; do i=$((i+1)); echo ${prefix}-$i; done; ${then}`,
];
const ticking = (prefix: string, sleep = '0.1') => [
  'sh',
  '-c',
  `i=0; while true; do i=$((i+1)); echo ${prefix}-$i; sleep ${sleep}; done`,
];
/** What Docker itself recorded for a container (stdout and stderr). */
const dockerLines = (id: string) => docker('logs', id).split('\n').filter(Boolean);

describe('logs of real containers', () => {
  let h: Harness;
  let app: { id: string; name: string };
  let seq = 0;

  const run = async (type: string, index: number, cmd: string[], a = app) => {
    const info = await h.emu.runtime.run({
      name: `emu-${h.emu.instanceId}-logs-${++seq}-${type}-${index}`,
      image: DEFAULT_STACK_IMAGE,
      cmd,
      env: {},
      labels: {
        [LABELS.instance]: h.emu.instanceId,
        [LABELS.appId]: a.id,
        [LABELS.appName]: a.name,
        [LABELS.type]: type,
        [LABELS.index]: String(index),
      },
      memoryBytes: 64 * 1024 * 1024,
    });
    return info.engineId;
  };
  const history = async (a: { name: string }, params: Record<string, string | number> = {}) =>
    (await readLogs(await logsUrl(h, a.name), { n: 10_000, ...params })).lines;

  beforeAll(async () => {
    h = await startEmulator({ intervals: { logsPingMs: 200 }, logs: { drains: { retryMinMs: 50, retryMaxMs: 200 } } });
    app = await createApp(h, 'docker-logs-app');
  });
  afterAll(async () => {
    await h.stop();
    removeByLabel(`${LABELS.instance}=${h.emu.instanceId}`);
  });

  it('the text endpoint returns exactly the last n lines in order; filters select containers', async () => {
    const web = await run('web', 1, numbered('line', 50));
    const worker = await run('worker', 1, numbered('job', 5));
    await eventually(async () => (await history(app, { filter: 'web|worker' })).length === 55, {
      what: '55 lines collected',
    });
    const last10 = await history(app, { n: 10, filter: 'web' });
    expect(last10.map(messageOf)).toEqual(dockerLines(web).slice(-10));
    expect(last10.map(messageOf)).toEqual(Array.from({ length: 10 }, (_, i) => `line-${41 + i}`));
    expect((await history(app, { filter: 'worker-1' })).map(messageOf)).toEqual(dockerLines(worker));
    expect(new Set((await history(app, { filter: 'web|worker' })).map(containerOf))).toEqual(
      new Set(['web-1', 'worker-1']),
    );
    expect((await readLogs(await logsUrl(h, app.name), { filter: 'web(' })).status).toBe(400);
  });

  it('WebSocket and SSE clients get the history, then new lines, then pings', async () => {
    const id = await run('clock', 1, ticking('tick'));
    await eventually(async () => (await history(app, { filter: 'clock' })).length >= 5, { what: 'first ticks' });
    const url = await logsUrl(h, app.name);
    const ws = await openWs(url, '&n=3&filter=clock');
    const sse = await openSse(url, '&n=3&filter=clock');
    try {
      for (const c of [ws, sse]) {
        await eventually(() => c.lines.length >= 10 && c.pings >= 1, { what: 'history, live lines and a ping' });
        const n = c.lines.map((l) => Number(messageOf(l).split('-')[1]));
        // Consecutive numbers: history joined to live lines with no gap and no repeat.
        expect(n).toEqual(Array.from({ length: n.length }, (_, i) => n[0] + i));
        expect(new Set(c.lines.map(containerOf))).toEqual(new Set(['clock-1']));
      }
      const recorded = dockerLines(id);
      expect(recorded).toEqual(expect.arrayContaining(ws.lines.map(messageOf)));
    } finally {
      ws.close();
      sse.close();
      await h.emu.runtime.remove(id);
    }
  });

  it('a restarted container is resumed: every line once, the same as docker logs', async () => {
    const id = await run('restarter', 1, numbered('r', 20));
    await eventually(async () => (await history(app, { filter: 'restarter' })).length === 20, { what: '20 lines' });
    docker('restart', '-t', '0', id);
    await eventually(async () => (await history(app, { filter: 'restarter' })).length >= 40, {
      what: '40 lines after the restart',
    });
    await h.emu.area('logs').pipeline.idle();
    expect((await history(app, { filter: 'restarter' })).map(messageOf)).toEqual(dockerLines(id));
    expect(dockerLines(id)).toHaveLength(40);
  });

  it('TCP and UDP syslog receivers get well-formed RFC 5424 frames naming the app and container', async () => {
    const tcp = await tcpSyslogServer();
    const udp = await udpSyslogServer();
    const sys = await createApp(h, 'docker-syslog-app');
    try {
      for (const host of ['127.0.0.1', 'udp://127.0.0.1']) {
        const port = host.startsWith('udp') ? udp.port : tcp.port;
        expect(
          (
            await h.call('POST', `/v1/apps/${sys.name}/log_drains`, {
              body: { drain: { type: 'syslog', token: 'tok', host, port: String(port) } },
            })
          ).status,
        ).toBe(201);
      }
      const id = await run('worker', 3, numbered('sys', 30), sys);
      for (const rx of [tcp, udp]) {
        await eventually(() => rx.messages.length >= 30, { what: 'syslog frames' });
        expect(rx.errors).toEqual([]);
        expect(rx.messages.map((m) => m.msg)).toEqual(dockerLines(id));
        for (const m of rx.messages) {
          expect(m).toMatchObject({ version: '1', appName: sys.name, procId: 'worker-3', pri: 14 });
          expect(m.sd).toContain('container="worker-3"');
        }
      }
    } finally {
      await tcp.close();
      await udp.close();
    }
  });

  it('a file drain holds every line; an unreachable drain delays it not', async () => {
    const fileApp = await createApp(h, 'docker-file-drain-app');
    const dead = await closedPort();
    await h.call('POST', `/v1/apps/${fileApp.name}/log_drains`, {
      body: { drain: { type: 'syslog', token: 't', host: '127.0.0.1', port: String(dead) } },
    });
    const url = (
      await h.call('POST', `/v1/apps/${fileApp.name}/log_drains`, {
        body: { drain: { type: 'elk', url: 'https://elk.example.test' } },
      })
    ).body.drain.url;
    const row = h.emu.db.prepare<[string], { id: string }>('SELECT id FROM log_drains WHERE url = ?').get(url)!;
    const file = h.emu.area('logs').dispatcher.fileOf(row.id);
    const id = await run('web', 1, numbered('fd', 2000), fileApp);
    const read = () => (existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n') : []);
    await eventually(() => read().length >= 2000, { what: '2000 lines in the drain file' });
    expect(read().map(messageOf)).toEqual(dockerLines(id));
    expect(read()).toHaveLength(2000);
  });

  it('a followed stream left unread while the container prints pauses, then gives every line once, in order', async () => {
    const count = 20_000;
    const id = await run('unread', 1, ['sh', '-c', `seq 1 ${count}; exec sleep 3600`]);
    const stream = await h.emu.runtime.logs(id, { follow: true });
    try {
      // Nothing is read until the engine holds every line: the stream's line queue (1,000 lines) fills, the socket
      // is left unread (src/runtime/docker-logs.ts), and reading resumes as the queue is emptied.
      await eventually(() => dockerLines(id).length === count, { what: `${count} lines in docker logs` });
      const got: string[] = [];
      for await (const l of stream) {
        got.push(l.text);
        if (got.length === count) break;
      }
      expect(got).toEqual(Array.from({ length: count }, (_, i) => String(i + 1)));
    } finally {
      stream.close();
      await h.emu.runtime.remove(id);
    }
  }, 120_000);

  it('engine calls after a followed stream ends get their answers (the stream leaves no socket paused)', async () => {
    const count = 5_000;
    const id = await run('ends', 1, ['sh', '-c', `seq 1 ${count}`]);
    try {
      const stream = await h.emu.runtime.logs(id, { follow: true });
      let n = 0;
      for await (const _ of stream) n++; // ends as the container exits
      expect(n).toBe(count);
      // The engine's sockets are kept alive and reused: the follow stream's socket serves the next calls. A call on a
      // socket left paused never gets its answer: each is given 10 s (an inspect answers in milliseconds).
      for (let i = 0; i < 3; i++) {
        let bound: NodeJS.Timeout | undefined;
        const unanswered = new Promise<never>((_, fail) => {
          bound = setTimeout(() => fail(new Error(`inspect ${i + 1} got no answer in 10 s: a paused socket?`)), 10_000);
        });
        try {
          expect((await Promise.race([h.emu.runtime.inspect(id), unanswered]))?.state).toBe('exited');
        } finally {
          clearTimeout(bound);
        }
      }
    } finally {
      await h.emu.runtime.remove(id);
    }
  }, 60_000);

  it('a 50,000-line burst reaches a WebSocket subscriber and a file drain: every line once, in order, as docker logs has it', async () => {
    const burstApp = await createApp(h, 'docker-burst-app');
    const url = (
      await h.call('POST', `/v1/apps/${burstApp.name}/log_drains`, {
        body: { drain: { type: 'elk', url: 'https://elk-burst.example.test' } },
      })
    ).body.drain.url;
    const row = h.emu.db.prepare<[string], { id: string }>('SELECT id FROM log_drains WHERE url = ?').get(url);
    if (!row) throw new Error('the drain row is missing');
    const file = h.emu.area('logs').dispatcher.fileOf(row.id);
    const ws = await openWs(await logsUrl(h, burstApp.name), '&n=0');
    const count = 50_000;
    try {
      // busybox seq prints as fast as the container can: batches many lines a read of the engine's stream.
      const id = await run('burst', 1, ['sh', '-c', `seq 1 ${count}; exec sleep 3600`], burstApp);
      const read = () => (existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n') : []);
      await eventually(
        () => {
          if (ws.closed) throw giveUp(`the socket was closed after ${ws.lines.length} lines`);
          const inFile = read().length;
          if (ws.lines.length < count || inFile < count)
            throw new Error(`${ws.lines.length} lines on the socket, ${inFile} in the drain file`);
          return true;
        },
        { what: `${count} lines on the socket and in the drain file`, timeoutMs: 120_000 },
      );
      const expected = Array.from({ length: count }, (_, i) => String(i + 1));
      expect(dockerLines(id)).toEqual(expected);
      expect(ws.lines.map(messageOf)).toEqual(expected);
      expect(new Set(ws.lines.map(containerOf))).toEqual(new Set(['burst-1']));
      expect(read().map(messageOf)).toEqual(expected);
      await h.emu.runtime.remove(id);
    } finally {
      ws.close();
    }
  }, 180_000);
});

describe('archives of real container output', () => {
  it('rotate, list, download and expire', async () => {
    const h = await startEmulator({ logs: { historyMaxLines: 100, archivesPerPage: 3, archiveUrlTtlMs: 1_000 } });
    try {
      const app = await createApp(h, 'docker-archive-app');
      const info = await h.emu.runtime.run({
        name: `emu-${h.emu.instanceId}-archive-web-1`,
        image: DEFAULT_STACK_IMAGE,
        cmd: numbered('arc', 500),
        env: {},
        labels: {
          [LABELS.instance]: h.emu.instanceId,
          [LABELS.appId]: app.id,
          [LABELS.appName]: app.name,
          [LABELS.type]: 'web',
          [LABELS.index]: '1',
        },
        memoryBytes: 64 * 1024 * 1024,
      });
      const total = async () => {
        const hist = (await readLogs(await logsUrl(h, app.name), { n: 10_000 })).lines.length;
        const all = [];
        let cursor = '';
        for (;;) {
          const r = (await h.call('GET', `/v1/apps/${app.name}/logs_archives${cursor ? `?cursor=${cursor}` : ''}`))
            .body;
          all.push(...r.archives);
          if (!r.has_more) break;
          cursor = r.next_cursor;
        }
        return { hist, archives: all as { url: string; size: number }[] };
      };
      await eventually(
        async () => {
          h.emu.area('logs').maintain();
          const t = await total();
          return t.archives.length > 0 && t.hist > 0 && t.hist <= 100 ? t : null;
        },
        { what: 'rotation into archives' },
      );
      await eventually(
        async () => {
          const { hist, archives } = await total();
          const lines: string[] = [];
          for (const a of archives.reverse())
            lines.push(
              ...gunzipSync(Buffer.from(await (await fetch(a.url)).arrayBuffer()))
                .toString()
                .trimEnd()
                .split('\n')
                .map(messageOf),
            );
          const history = (await readLogs(await logsUrl(h, app.name), { n: 10_000 })).lines.map(messageOf);
          return (
            hist > 0 &&
            lines.length + history.length === 500 &&
            JSON.stringify([...lines, ...history]) === JSON.stringify(dockerLines(info.engineId))
          );
        },
        { what: 'archives + history = docker logs' },
      );
      const a = (await total()).archives[0];
      await eventually(async () => (await fetch(a.url)).status === 403, {
        what: 'the archive URL to expire',
        timeoutMs: 10_000,
      });
    } finally {
      await h.stop();
      removeByLabel(`${LABELS.instance}=${h.emu.instanceId}`);
    }
  });
});
