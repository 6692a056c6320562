import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LABELS } from '../../src/runtime/runtime.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { archiveOf, FAST, waitForDeployment } from '../support/apps.ts';
import { dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// `scalingo deploy ./app.tar.gz` as the CLI does it (Scalingo/cli deployments/deploy.go):
// POST /v1/sources (body {}, expects 201) → PUT upload_url (Content-Type application/x-gzip,
// Content-Length, no auth, expects 200) → POST /v1/apps/:app/deployments {"deployment":
// {"git_ref": null, "source_url": download_url}} (expects 201) → follow links.deployments_stream.
const GO_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json',
  'user-agent': 'Scalingo CLI v1.48.0, Scalingo Go Client',
};
const APP = 'go-deploy-app';

describe('scalingo deploy <archive>: sources, upload, deployment from the download URL', () => {
  let h: Harness;
  let bearer: string;
  let archive: string;
  const clock = new ManualClock();
  const go = (method: string, path: string, body?: unknown) =>
    h.call(method, path, {
      as: { bearer },
      headers: GO_HEADERS,
      raw: method === 'GET' || method === 'DELETE' ? undefined : body === undefined ? '{}' : JSON.stringify(body),
    });
  const put = (url: string, data: Uint8Array, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'PUT',
      headers: {
        'content-type': 'application/x-gzip',
        'content-length': String(data.length),
        'user-agent': 'Go-http-client/1.1',
        ...headers,
      },
      body: data as BodyInit,
    });
  const sourcesDir = () => join(h.emu.stateDir, 'sources');

  beforeAll(async () => {
    h = await startEmulator(
      { intervals: FAST, sources: { maxArchiveBytes: 64 * 1024, uploadTtlMs: 10 * 60_000, uploadSweepMs: 200 } },
      { clock },
    );
    bearer = await h.bearer();
    archive = await archiveOf('busybox-web');
    expect((await go('POST', '/v1/apps', { app: { name: APP } })).status).toBe(201);
  });
  afterAll(async () => {
    await h.stop();
    removeInstance(h.emu.instanceId);
    rmSync(dirname(archive), { recursive: true, force: true });
  });

  it('creates a source, uploads, deploys from download_url with a streamed build log; the app really runs', async () => {
    const created = await go('POST', '/v1/sources');
    expect(created.status).toBe(201);
    const { upload_url, download_url } = created.body.source;
    expect(upload_url).toMatch(new RegExp(`^${h.api}/sources/[0-9a-f-]{36}\\?token=`));
    expect(download_url).not.toBe(upload_url);

    const data = readFileSync(archive);
    const up = await put(upload_url, data);
    expect(up.status).toBe(200);
    // Streamed to a file in the data dir, byte for byte.
    const stored = readdirSync(sourcesDir()).filter((f) => f.endsWith('.tar.gz'));
    expect(stored).toHaveLength(1);
    expect(readFileSync(join(sourcesDir(), stored[0])).equals(data)).toBe(true);
    // The download URL serves it (for other consumers); the deployment reads the file directly.
    const down = await fetch(download_url);
    expect(down.status).toBe(200);
    expect(Buffer.from(await down.arrayBuffer()).equals(data)).toBe(true);

    const d = await go('POST', `/v1/apps/${APP}/deployments`, {
      deployment: { git_ref: null, source_url: download_url },
    });
    expect(d.status).toBe(201);
    const app = (await go('GET', `/v1/apps/${APP}`)).body.app;
    // The CLI follows the deployment over the app's deployments stream.
    const lines: string[] = [];
    const ws = new WebSocket(app.links.deployments_stream);
    ws.on('message', (m) => lines.push(m.toString()));
    await new Promise((ok, fail) => (ws.once('open', ok), ws.once('error', fail)));
    ws.send(JSON.stringify({ type: 'auth', data: { token: bearer } }));
    const done = await waitForDeployment(h, APP);
    expect(done).toMatchObject({ id: d.body.deployment.id, status: 'success' });
    await eventually(() => lines.some((l) => /Application deployed/.test(l)), {
      timeoutMs: 10_000,
      what: 'the build log on the stream',
    });
    ws.close();
    const output = (await go('GET', `/v1/apps/${APP}/deployments/${done.id}/output`)).text;
    expect(output).toMatch(/Fetching archive/);
    expect(output).not.toMatch(/http:\/\//); // read from the file, not fetched over HTTP
    expect(dockerPs([`${LABELS.appName}=${APP}`]).length).toBeGreaterThan(0);
    expect(output).toMatch(/Building on stack scalingo-22 /);

    // stacks-set (PATCH {"app": {"stack_id"}}) takes effect at the next deployment: its build uses the new stack.
    expect((await go('PATCH', `/v1/apps/${APP}`, { app: { stack_id: 'scalingo-24' } })).body.app.stack_id).toBe(
      'scalingo-24',
    );
    const again = (await go('POST', '/v1/sources')).body.source;
    expect((await put(again.upload_url, data)).status).toBe(200);
    const d2 = await go('POST', `/v1/apps/${APP}/deployments`, {
      deployment: { git_ref: 'v2', source_url: again.download_url },
    });
    const done2 = await waitForDeployment(
      h,
      APP,
      (x) =>
        x.id === d2.body.deployment.id &&
        x.status !== 'building' &&
        x.status !== 'queued' &&
        x.status !== 'pushing' &&
        x.status !== 'starting',
    );
    expect(done2.status).toBe('success');
    expect((await go('GET', `/v1/apps/${APP}/deployments/${done2.id}/output`)).text).toMatch(
      /Building on stack scalingo-24 /,
    );
  }, 150_000); // two builds and a container start: slow on a loaded machine

  it('upload failures: bad or foreign token 403, too large 413 (by header and while streaming), empty 400, other methods 405', async () => {
    const { upload_url, download_url } = (await go('POST', '/v1/sources')).body.source;
    const forged = upload_url.replace(/token=[^&]+/, 'token=x.y');
    expect((await put(forged, Buffer.from('x'))).status).toBe(403);
    // The download URL does not authorise an upload, nor the reverse.
    expect((await put(download_url, Buffer.from('x'))).status).toBe(403);
    expect((await fetch(upload_url)).status).toBe(403);
    // Not uploaded yet.
    expect((await fetch(download_url)).status).toBe(404);
    const big = Buffer.alloc(64 * 1024 + 1);
    const tooLarge = await put(upload_url, big);
    expect(tooLarge.status).toBe(413);
    // No Content-Length (chunked): the limit is enforced while the body streams.
    const chunked = await fetch(upload_url, {
      method: 'PUT',
      headers: { 'content-type': 'application/x-gzip' },
      body: new ReadableStream({
        start: (c) => (c.enqueue(new Uint8Array(40 * 1024)), c.enqueue(new Uint8Array(40 * 1024)), c.close()),
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await put(upload_url, Buffer.alloc(0))).status).toBe(400);
    expect((await fetch(upload_url, { method: 'POST' })).status).toBe(405);
    expect(readdirSync(sourcesDir()).filter((f) => f.endsWith('.part'))).toEqual([]);
    // A deployment from a source never uploaded is refused at once.
    const dep = await go('POST', `/v1/apps/${APP}/deployments`, {
      deployment: { git_ref: null, source_url: download_url },
    });
    expect(dep.status).toBe(422);
    expect(dep.body.errors.source_url[0]).toMatch(/nothing was uploaded/);
    expect((await h.call('POST', '/v1/sources', { as: null, headers: GO_HEADERS, raw: '{}' })).status).toBe(401);
  });

  it('sources expire: URLs refused, files and rows swept', async () => {
    const { upload_url, download_url } = (await go('POST', '/v1/sources')).body.source;
    expect((await put(upload_url, readFileSync(archive))).status).toBe(200);
    const id = new URL(upload_url).pathname.split('/').pop()!;
    expect(existsSync(join(sourcesDir(), `${id}.tar.gz`))).toBe(true);
    clock.advance(10 * 60_000 + 1);
    expect((await fetch(download_url)).status).toBe(403);
    const dep = await go('POST', `/v1/apps/${APP}/deployments`, {
      deployment: { git_ref: null, source_url: download_url },
    });
    expect(dep.status).toBe(422);
    expect(dep.body.errors.source_url[0]).toMatch(/expired/);
    await eventually(() => !existsSync(join(sourcesDir(), `${id}.tar.gz`)), {
      timeoutMs: 10_000,
      what: 'the expired archive to be swept',
    });
    expect(h.emu.db.prepare('SELECT COUNT(*) FROM sources WHERE id = ?').pluck().get(id)).toBe(0);
  });
});
