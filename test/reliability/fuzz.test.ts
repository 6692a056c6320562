import { Agent, request as httpRequest } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { type EmulatorProcess, startEmulatorProcess } from './support/emulator-process.ts';
import { type HostileRequest, hostileRequest, prng, type Route } from './support/hostile.ts';

// Hostile requests over every route of the Hono app (enumerated from app.routes, so routes added
// later are fuzzed too): 0 answers ≥ 500, no crash, health 200 afterwards, memory back near idle.
// The bulk goes in-process through app.request() (a crash is an unhandled error: vitest fails the
// run); a sample goes over real HTTP to the emulator in a process of its own.
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const IN_PROCESS = Number(process.env.FUZZ_COUNT ?? 10_000);
const OVER_HTTP = 1_000;
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 8);
const MB = 1024 * 1024;
const basic = (t: string) => `Basic ${Buffer.from(`:${t}`).toString('base64')}`;

/** Every (method, path) of the app, without middleware entries. */
function routesOf(h: Harness): Route[] {
  const seen = new Map<string, Route>();
  for (const r of h.emu.app.routes)
    if (r.method !== 'ALL' && !r.path.includes('*'))
      seen.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
  return [...seen.values()];
}

function authorization(r: ReturnType<typeof prng>): () => string {
  return () =>
    r.chance(0.93)
      ? basic(TOKENS.dev)
      : r.pick([
          '',
          'Bearer ',
          'Bearer a.b.c',
          'Basic %%%',
          `Basic ${Buffer.from('dev:wrong').toString('base64')}`,
          'Digest x',
          `Bearer ${'A'.repeat(9000)}`,
        ]);
}

interface Figures {
  count: number;
  ms: number;
  statuses: Record<string, number>;
  byKind: Record<string, number>;
  /** Milliseconds spent per kind (where the time goes). */
  msByKind: Record<string, number>;
  fives: { req: string; status: number; body: string }[];
}

function describeReq(q: HostileRequest): string {
  return `${q.method} ${q.path.slice(0, 200)} [${q.kind}] ${q.body ? `body ${q.body.length} B: ${q.body.slice(0, 120)}` : ''}`;
}

async function runAll(
  n: number,
  make: () => HostileRequest,
  send: (q: HostileRequest) => Promise<{ status: number; body: string }>,
): Promise<Figures> {
  const f: Figures = { count: 0, ms: 0, statuses: {}, byKind: {}, msByKind: {}, fives: [] };
  const t0 = performance.now();
  let left = n;
  const worker = async () => {
    while (left > 0) {
      left--;
      const q = make();
      const t = performance.now();
      const res = await send(q);
      f.msByKind[q.kind] = Math.round((f.msByKind[q.kind] ?? 0) + performance.now() - t);
      f.count++;
      f.statuses[res.status] = (f.statuses[res.status] ?? 0) + 1;
      f.byKind[q.kind] = (f.byKind[q.kind] ?? 0) + 1;
      if (res.status >= 500 && f.fives.length < 20)
        f.fives.push({ req: describeReq(q), status: res.status, body: res.body.slice(0, 300) });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  f.ms = Math.round(performance.now() - t0);
  return f;
}

/** Plain node:http, so paths and headers go as written (fetch would normalise or refuse some). */
function sendHttp(api: string, agent: Agent) {
  const u = new URL(api);
  return (q: HostileRequest) =>
    new Promise<{ status: number; body: string }>((resolve) => {
      const path = q.path.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
      const headers: Record<string, string | number> = { ...q.headers };
      if (!headers.authorization) delete headers.authorization;
      if (q.body !== undefined) headers['content-length'] = Buffer.byteLength(q.body);
      const req = httpRequest({ host: u.hostname, port: u.port, method: q.method, path, headers, agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c.length < 1000 ? c : ''));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', () => resolve({ status: 0, body: 'response error' }));
      });
      // A 413 closes the connection while the body is still being written: that is not a failure.
      req.on('error', (err) =>
        resolve({
          status:
            (err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET'
              ? 413
              : 0,
          body: err.message,
        }),
      );
      req.end(q.body);
    });
}

describe('fuzzing every route with hostile requests', () => {
  let h: Harness;
  let routes: Route[];
  let params: Record<string, string[]>;

  beforeAll(async () => {
    h = await startEmulator({}, { runtime: new FakeLogsRuntime() });
    routes = routesOf(h);
    // Real objects to aim at, so hostile bodies reach the handlers behind the 404s.
    const app = (await h.call('POST', '/v1/apps', { body: { app: { name: 'fuzz-target' } } })).body.app;
    const variable = (
      await h.call('POST', '/v1/apps/fuzz-target/variables', { body: { variable: { name: 'FUZZ', value: '1' } } })
    ).body.variable;
    const alert = (
      await h.call('POST', '/v1/apps/fuzz-target/alerts', {
        body: { alert: { container_type: 'web', metric: 'cpu', limit: 0.5 } },
      })
    ).body.alert;
    const notifier = (
      await h.call('POST', '/v1/apps/fuzz-target/notifiers', {
        body: { notifier: { platform_id: 'email', name: 'n', type_data: { emails: ['a@example.test'] } } },
      })
    ).body.notifier;
    const collab = (
      await h.call('POST', '/v1/apps/fuzz-target/collaborators', {
        body: { collaborator: { email: 'other@example.test' } },
      })
    ).body.collaborator;
    params = {
      app: ['fuzz-target', app.id],
      id: [variable?.id, alert?.id, notifier?.id, collab?.id].filter(Boolean),
      metric: ['cpu', 'memory', 'router'],
      container: ['web'],
      index: ['1'],
      container_id: ['web-1', 'one-off-1'],
    };
  });
  afterAll(() => h?.stop());

  it(`${IN_PROCESS} hostile requests in-process: 0 answers ≥ 500, health 200, memory back near idle`, async () => {
    const r = prng(SEED);
    const auth = authorization(r);
    // A full collection before each reading: what stays is what the requests left behind.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const { rss: rssBefore, heapUsed: heapBefore } = process.memoryUsage();
    const f = await runAll(
      IN_PROCESS,
      () => hostileRequest(r, routes, { params, authorization: auth, bodyLimit: h.emu.config.bodyLimitBytes }),
      async (q) => {
        const headers: Record<string, string> = { ...q.headers };
        if (!headers.authorization) delete headers.authorization;
        // As a real client would: the body limit is decided from Content-Length.
        if (q.body !== undefined) headers['content-length'] = String(Buffer.byteLength(q.body));
        const res = await h.emu.app.request(q.path, { method: q.method, headers, body: q.body });
        return { status: res.status, body: await res.text() };
      },
    );
    gc();
    const { rss: rssAfter, heapUsed: heapAfter } = process.memoryUsage();
    console.log(
      `fuzz (in-process, seed ${SEED}): ${f.count} requests over ${routes.length} routes in ${f.ms} ms; statuses ${JSON.stringify(f.statuses)}; kinds ${JSON.stringify(f.byKind)}; ms by kind ${JSON.stringify(f.msByKind)}; RSS ${Math.round(rssBefore / MB)} MB before, ${Math.round(rssAfter / MB)} MB after; JS heap ${Math.round(heapBefore / MB)} MB before, ${Math.round(heapAfter / MB)} MB after`,
    );
    expect(f.fives).toEqual([]);
    expect(f.count).toBe(IN_PROCESS);
    expect((await h.call('GET', '/_emulator/health')).status).toBe(200);
    // The objects aimed at are still whole (nothing corrupted them or the prototypes).
    expect((await h.call('GET', '/v1/apps/fuzz-target')).status).toBe(200);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Nothing the requests allocated is still reachable (the heap is back near idle); RSS keeps
    // some of the pages the 1 MB bodies needed, bounded.
    expect(heapAfter - heapBefore).toBeLessThan(30 * MB);
    expect(rssAfter - rssBefore).toBeLessThan(400 * MB);
  }, 120_000);

  describe('over real HTTP, the emulator in its own process', () => {
    let p: EmulatorProcess;
    beforeAll(async () => {
      p = await startEmulatorProcess({ EMU_RUNTIME: 'fake' });
    });
    afterAll(() => p?.stop());

    it(`${OVER_HTTP} hostile requests: 0 answers ≥ 500, the process alive, health 200, RSS back near idle`, async () => {
      const api = p.api;
      const setup = async (method: string, path: string, body: unknown) =>
        (
          await fetch(`${api}${path}`, {
            method,
            headers: { authorization: basic(TOKENS.dev), 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
        ).json() as Promise<Record<string, { id: string }>>;
      const app = (await setup('POST', '/v1/apps', { app: { name: 'fuzz-target' } })).app;
      const variable = (
        await setup('POST', '/v1/apps/fuzz-target/variables', { variable: { name: 'FUZZ', value: '1' } })
      ).variable;
      const httpParams = { ...params, app: ['fuzz-target', app.id], id: [variable.id] };
      const rssIdle = p.rss();
      const r = prng(SEED + 1);
      const auth = authorization(r);
      const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
      const f = await runAll(
        OVER_HTTP,
        () =>
          hostileRequest(r, routes, {
            params: httpParams,
            authorization: auth,
            bodyLimit: h.emu.config.bodyLimitBytes,
          }),
        sendHttp(api, agent),
      );
      agent.destroy();
      const rssAfter = p.rss();
      console.log(
        `fuzz (HTTP, separate process, seed ${SEED + 1}): ${f.count} requests in ${f.ms} ms; statuses ${JSON.stringify(f.statuses)}; RSS ${Math.round(rssIdle / MB)} MB idle, ${Math.round(rssAfter / MB)} MB after`,
      );
      expect(f.fives).toEqual([]);
      expect(f.statuses['0'] ?? 0).toBe(0); // no connection failed without an answer
      expect(p.exited()).toBeNull();
      expect((await fetch(`${api}/_emulator/health`)).status).toBe(200);
      expect(rssAfter - rssIdle).toBeLessThan(300 * MB);
    }, 120_000);
  });
});
