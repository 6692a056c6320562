// Deployments of one app posted while one runs (issue #23): they wait as `queued`, run one at a time
// in the order posted, and at most 10 wait (the 11th answers 409 {error}). The first deployment's
// source is an HTTP server holding its answer, so the app stays busy until the test releases it.

import { createServer, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeRuntime } from '../support/fake-runtime.ts';

describe('deployments queue per app', () => {
  let h: Harness;
  let server: Server;
  let url = '';
  const held: ServerResponse[] = [];
  let release = false;

  beforeAll(async () => {
    h = await startEmulator({}, { runtime: new FakeRuntime() });
    server = createServer((_req, res) => {
      if (release) return void res.writeHead(404).end();
      held.push(res);
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/app.tar.gz`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await h.stop();
  });

  it('queues 10 behind the running one, refuses the 12th with 409, then runs them in order', async () => {
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'queue-app' } } })).status).toBe(201);
    const post = () => h.call('POST', '/v1/apps/queue-app/deployments', { body: { deployment: { source_url: url } } });
    const first = await post();
    expect(first.status).toBe(201);
    await eventually(() => held.length === 1, { what: 'the first deployment to fetch its source' });
    const queued = [];
    for (let i = 0; i < 10; i++) queued.push(await post());
    expect(queued.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(queued.map((r) => r.body.deployment.status)).toEqual(Array(10).fill('queued'));
    const refused = await post();
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: '10 deployments of this app are already queued: wait for one of them to end',
    });
    // Still one fetch: the queued ones have not started.
    expect(held).toHaveLength(1);
    release = true;
    for (const res of held) res.writeHead(404).end();
    const ids = [first.body.deployment.id, ...queued.map((r) => r.body.deployment.id)] as string[];
    const list = await eventually(
      async () => {
        const r = await h.call('GET', '/v1/apps/queue-app/deployments?per_page=20');
        const ds = r.body.deployments as { id: string; status: string; finished_at: string | null }[];
        return ds.length === 11 && ds.every((d) => d.status === 'build-error') ? ds : null;
      },
      { timeoutMs: 30_000, what: 'the 11 deployments to end' },
    );
    const finished = ids.map((id) => Date.parse(list.find((d) => d.id === id)?.finished_at ?? ''));
    expect(finished).toEqual([...finished].sort((a, b) => a - b));
    const output = await h.call('GET', `/v1/apps/queue-app/deployments/${ids[10]}/output`);
    expect(output.text).toMatch(/cannot download .*HTTP 404/);
  });
});
