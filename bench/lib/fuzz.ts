import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The reliability suite's fuzzing (test/reliability/fuzz.test.ts), over real HTTP to an emulator in a
 * process of its own: the same seeded generator (test/reliability/support/hostile.ts), the same
 * authorisation mix and targets, every route of the Hono app.
 */

interface Route {
  method: string;
  path: string;
}
interface HostileRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  kind: string;
}
interface HostileModule {
  prng(seed: number): { chance(p: number): boolean; pick<T>(xs: readonly T[]): T };
  hostileRequest(
    r: unknown,
    routes: Route[],
    opts: { params: Record<string, string[]>; authorization: () => string; bodyLimit: number },
  ): HostileRequest;
}

/** The suite's seed for its HTTP part (FUZZ_SEED + 1). */
export const FUZZ_SEED = 20_261_123 + 1;

/**
 * Every (method, path) of the app, read from an emulator built in this process (never started:
 * no port, no Docker call), the way the suite enumerates them; plus the body limit.
 */
export async function fuzzRoutes(emulatorDir: string): Promise<{ routes: Route[]; bodyLimit: number }> {
  const { createEmulator } = (await import(
    pathToFileURL(join(emulatorDir, 'src/emulator.ts')).href
  )) as typeof import('../../src/emulator.ts');
  const { loadConfig } = (await import(
    pathToFileURL(join(emulatorDir, 'src/config/load.ts')).href
  )) as typeof import('../../src/config/load.ts');
  const config = loadConfig({
    ignoreDefaultFile: true,
    env: {},
    overrides: { port: 0, routerPort: 0, sshPort: 0, inMemory: true, logLevel: 'silent' } as never,
  });
  const emu = createEmulator(config);
  const seen = new Map<string, Route>();
  for (const r of emu.app.routes)
    if (r.method !== 'ALL' && !r.path.includes('*'))
      seen.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
  emu.db.close();
  return { routes: [...seen.values()], bodyLimit: config.bodyLimitBytes };
}

/** Plain node:http, so paths and headers go as written (fetch would normalise or refuse some). */
function sendHttp(api: string, agent: Agent) {
  const u = new URL(api);
  return (q: HostileRequest) =>
    new Promise<number>((resolve) => {
      const path = q.path.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
      const headers: Record<string, string | number> = { ...q.headers };
      if (!headers.authorization) delete headers.authorization;
      if (q.body !== undefined) headers['content-length'] = Buffer.byteLength(q.body);
      const req = httpRequest({ host: u.hostname, port: u.port, method: q.method, path, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      });
      // A 413 closes the connection while the body is still being written: that is an answer.
      req.on('error', (err) =>
        resolve(['EPIPE', 'ECONNRESET'].includes((err as NodeJS.ErrnoException).code ?? '') ? 413 : 0),
      );
      req.end(q.body);
    });
}

/**
 * `count` hostile requests with `concurrency` keep-alive connections. apiToken authorises 93 % of them
 * (HTTP basic, as the suite does); params are the real objects aimed at. Returns statuses and time.
 */
export async function fuzzOverHttp(o: {
  repoDir: string;
  api: string;
  apiToken: string;
  routes: Route[];
  bodyLimit: number;
  params: Record<string, string[]>;
  count: number;
  concurrency: number;
  seed?: number;
}): Promise<{ statuses: Record<string, number>; ms: number }> {
  const hostile = (await import(
    pathToFileURL(join(o.repoDir, 'test/reliability/support/hostile.ts')).href
  )) as HostileModule;
  const r = hostile.prng(o.seed ?? FUZZ_SEED);
  const basic = (t: string) => `Basic ${Buffer.from(`:${t}`).toString('base64')}`;
  const auth = () =>
    r.chance(0.93)
      ? basic(o.apiToken)
      : r.pick([
          '',
          'Bearer ',
          'Bearer a.b.c',
          'Basic %%%',
          `Basic ${Buffer.from('dev:wrong').toString('base64')}`,
          'Digest x',
          `Bearer ${'A'.repeat(9000)}`,
        ]);
  const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency });
  const send = sendHttp(o.api, agent);
  const statuses: Record<string, number> = {};
  let left = o.count;
  const t0 = performance.now();
  const worker = async () => {
    while (left > 0) {
      left--;
      const status = await send(
        hostile.hostileRequest(r, o.routes, { params: o.params, authorization: auth, bodyLimit: o.bodyLimit }),
      );
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  agent.destroy();
  return { statuses, ms: performance.now() - t0 };
}
