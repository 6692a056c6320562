import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { connectTerminal, upload } from '../support/terminal.ts';

// Failure paths of #14–#18 that need no container (the engine is unreachable here on purpose).
describe('one-off containers without a Docker engine', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startEmulator({ docker: { socketPath: '/nonexistent/docker.sock', stopContainersOnExit: false } });
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'oneoff-nodocker' } } })).status).toBe(201);
  });
  afterAll(() => h.stop());

  it('run answers 503 with the plain explanation, and creates nothing', async () => {
    const res = await h.call('POST', '/v1/apps/oneoff-nodocker/run', { body: { command: 'sh' } });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: expect.stringMatching(/Docker engine cannot be reached/) });
    expect(
      (await h.call('GET', '/v1/apps/oneoff-nodocker/events')).body.events.some(
        (e: { type: string }) => e.type === 'run',
      ),
    ).toBe(false);
  });

  it('body and access checks come first: 422 without a command, 404 for an app of someone else, 401 without credentials', async () => {
    expect((await h.call('POST', '/v1/apps/oneoff-nodocker/run', { body: { env: {} } })).body).toEqual({
      errors: { command: ['missing field'] },
    });
    expect(
      (
        await h.call('POST', '/v1/apps/oneoff-nodocker/run', {
          raw: '{"command":',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    expect(
      (await h.call('POST', '/v1/apps/oneoff-nodocker/run', { body: { command: 'sh' }, as: 'other' })).body,
    ).toMatchObject({ resource: 'app' });
    expect((await h.call('POST', '/v1/apps/oneoff-nodocker/run', { body: { command: 'sh' }, as: null })).status).toBe(
      401,
    );
  });

  it('stop and kill of an unknown container: 404 {resource: container}', async () => {
    for (const action of ['stop', 'kill']) {
      const res = await h.call('POST', `/v1/apps/oneoff-nodocker/containers/one-off-1/${action}`, {
        body: { signal: 'SIGUSR1' },
      });
      expect(res.status).toBe(404);
      expect(res.body.resource).toBe('container');
    }
  });

  it("the attach URL routes refuse tokens that are not the emulator's (401), and CONNECT elsewhere (404)", async () => {
    const forged = `${h.api}/attach/65a1b2c3d4e5f60718293a4b.9999999999.${'A'.repeat(43)}`;
    expect((await fetch(forged, { method: 'PUT', body: '{"width":80,"height":24}' })).status).toBe(401);
    expect((await fetch(`${forged}/wait`)).status).toBe(401);
    expect((await fetch(forged)).status).toBe(401);
    expect((await upload(forged, 'a.txt', 'a')).status).toBe(401);
    const t = await connectTerminal(forged);
    expect(t.status).toBe(401);
    await t.ended;
    expect(JSON.parse(t.output())).toEqual({ error: expect.stringMatching(/invalid attach URL/) });
    expect((await connectTerminal(`${h.api}/v1/apps`)).status).toBe(404);
  });
});
