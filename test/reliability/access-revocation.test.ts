import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';
import { createApp, messageOf, openSse, openWs, readLogs } from '../support/logs.ts';

// Signed URLs are checked against current access at every use, and open streams of someone who
// lost access are closed: a collaborator removed after taking a logs_url (text, WebSocket, SSE)
// or while following the deployments stream; then everyone's, when the app is deleted.
describe('access is checked at use: a removed collaborator loses logs and streams at once', () => {
  const fake = new FakeLogsRuntime();
  let h: Harness;
  let app: { id: string; name: string };
  let web: string;

  beforeAll(async () => {
    h = await startEmulator({ intervals: { logsPingMs: 200 } as never }, { runtime: fake });
    app = await createApp(h, 'revoke-app');
    web = fake.add({ instanceId: h.emu.instanceId, appId: app.id, appName: app.name, type: 'web', index: 1 });
    await eventually(() => fake.followerCount(web), { what: 'the follower' });
    fake.print(web, 'before-removal');
  });
  afterAll(() => h.stop());

  /** The deployments stream as the clients use it: connect, then the auth message. */
  function deploymentsStream(token: string) {
    const ws = new WebSocket(`${h.api.replace(/^http/, 'ws')}/deployments-stream/apps/${app.name}`);
    const s = { ws, messages: [] as { type: string }[], close: null as null | { code: number; reason: string } };
    ws.on('message', (m) => s.messages.push(JSON.parse(String(m))));
    ws.on('close', (code, reason) => (s.close = { code, reason: String(reason) }));
    ws.on('open', () => ws.send(JSON.stringify({ type: 'auth', data: { token } })));
    return s;
  }

  it('logs_url (text, WebSocket, SSE) and the deployments stream stop working for the removed collaborator only', async () => {
    const added = await h.call('POST', `/v1/apps/${app.name}/collaborators`, {
      body: { collaborator: { email: 'other@example.test' } },
    });
    expect(added.status).toBe(201);
    const collaboratorId = added.body.collaborator.id;

    const otherUrl = (await h.call('GET', `/v1/apps/${app.name}/logs`, { as: 'other' })).body.logs_url as string;
    const devUrl = (await h.call('GET', `/v1/apps/${app.name}/logs`)).body.logs_url as string;
    expect((await readLogs(otherUrl)).lines.map(messageOf)).toEqual(['before-removal']);
    const otherWs = await openWs(otherUrl);
    const otherSse = await openSse(otherUrl);
    const devWs = await openWs(devUrl);
    const otherDeploys = deploymentsStream(await h.bearer(TOKENS.other));
    const devDeploys = deploymentsStream(await h.bearer(TOKENS.dev));
    // Every stream is live (pings arrive) before the removal.
    await eventually(() => otherWs.pings > 0 && otherSse.pings > 0 && devWs.pings > 0, { what: 'log stream pings' });
    await eventually(
      () => otherDeploys.messages.some((m) => m.type === 'ping') && devDeploys.messages.some((m) => m.type === 'ping'),
      { what: 'deployments stream pings' },
    );

    expect((await h.call('DELETE', `/v1/apps/${app.name}/collaborators/${collaboratorId}`)).status).toBe(204);

    // The removed collaborator: every open stream closed, the URL refused.
    await eventually(() => otherWs.closed && otherSse.closed && otherDeploys.close !== null, {
      what: "the removed collaborator's streams to close",
    });
    expect(otherDeploys.close?.code).toBe(4003);
    const text = await readLogs(otherUrl);
    expect(text.status).toBe(401);
    expect(JSON.parse(text.text)).toEqual({ error: expect.stringMatching(/no longer has access/) });
    await expect(openWs(otherUrl)).rejects.toMatchObject({ status: 401 });
    expect((await openSse(otherUrl)).status).toBe(401);

    // The owner: untouched, still receiving.
    fake.print(web, 'after-removal');
    await eventually(() => devWs.lines.some((l) => messageOf(l) === 'after-removal'), {
      what: "the owner's live line",
    });
    expect(devWs.closed).toBe(false);
    expect(devDeploys.close).toBeNull();
    expect((await readLogs(devUrl)).lines.map(messageOf)).toEqual(['before-removal', 'after-removal']);

    // The app deleted: the owner's streams end too, and the URL answers 404.
    expect((await h.call('DELETE', `/v1/apps/${app.name}?current_name=${app.name}`)).status).toBe(204);
    await eventually(() => devWs.closed && devDeploys.close !== null, {
      what: "the owner's streams to close with the app",
    });
    expect((await readLogs(devUrl)).status).toBe(404);
  });
});
