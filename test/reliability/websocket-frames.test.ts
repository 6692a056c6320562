import { rmSync } from 'node:fs';
import { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { TOKENS } from '../harness.ts';
import { copyFixture } from '../support/apps.ts';
import { eventually, removeInstance } from '../support/docker-cli.ts';
import { wsTerminal } from '../support/terminal.ts';
import { type EmulatorProcess, startEmulatorProcess } from './support/emulator-process.ts';
import { BAD_FRAMES, closedBy, frame, rawRequest, rawUpgrade } from './support/raw-ws.ts';

// Malformed WebSocket frames, sent by hand on raw sockets, on every WebSocket path of the emulator
// (deployments stream, logs stream, one-off attach, the router's WebSocket proxying) and hostile bytes
// on the CONNECT attach. The emulator runs as a process of its own: a crash would end it. Each bad
// frame closes its socket alone (1002/1007/1009); the process answers health 200 after all of them.
// The same setup shows attach URLs checked against current access (a removed collaborator's terminal).
const APP = 'frames-app';
const basic = `Basic ${Buffer.from(`:${TOKENS.dev}`).toString('base64')}`;

describe('malformed WebSocket frames on every WebSocket path (the emulator as a separate process, real Docker)', () => {
  let p: EmulatorProcess;
  let port: number;
  const dir = copyFixture('busybox-web');
  // The app's "web container" for the router: a WebSocket server of the test's own.
  const upstream = new WebSocketServer({ port: 0, host: '127.0.0.1', maxPayload: 1024 * 1024 });
  const upstreamErrors: string[] = [];
  upstream.on('connection', (ws) => {
    ws.on('error', (err) => upstreamErrors.push((err as Error & { code?: string }).code ?? err.message));
    ws.on('message', (m) => ws.send(m));
  });

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${p.api}${path}`, {
      ...init,
      headers: { authorization: basic, 'content-type': 'application/json', ...init.headers },
    });
  const alive = async () => {
    expect(p.exited(), p.output()).toBeNull();
    expect((await fetch(`${p.api}/_emulator/health`)).status).toBe(200);
  };

  beforeAll(async () => {
    if (!upstream.address()) await new Promise((r) => upstream.once('listening', r));
    p = await startEmulatorProcess({
      EMU_APP_DIR: dir,
      EMU_APP_NAME: APP,
      EMU_UPSTREAM_PORT: String((upstream.address() as AddressInfo).port),
      EMU_OVERRIDES: JSON.stringify({
        oneOff: { maxPerApp: 50 },
        intervals: { bootTimeoutMs: 20_000, bootGraceMs: 300, stopGraceSeconds: 1, watchDebounceMs: 200 },
      }),
    });
    port = Number(new URL(p.api).port);
    await eventually(
      async () =>
        ((await (await api(`/v1/apps/${APP}`)).json()) as { app: { status: string } }).app.status === 'running',
      { timeoutMs: 90_000, what: 'the bound app to be deployed and running' },
    );
  }, 150_000);

  afterAll(async () => {
    await p?.stop();
    if (p) {
      removeInstance(p.instanceId);
    }
    upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every bad frame on a fresh socket of `open()`; each must be closed with its code, the process must live on. */
  async function everyBadFrame(open: () => Promise<import('./support/raw-ws.ts').RawConnection>, where: string) {
    const results: string[] = [];
    for (const bad of BAD_FRAMES) {
      const c = await open();
      expect(c.status, `${where}: upgrade (${c.head})`).toBe(101);
      c.socket.write(bad.bytes);
      const code = await closedBy(c, `${where} to close after ${bad.name}`);
      results.push(`${bad.name}: ${code}`);
      expect(bad.codes, `${where}: ${bad.name} closed with ${code}`).toContain(code);
      c.destroy();
    }
    await alive();
    return results;
  }

  it('deployments stream: an upgrade with a bad credential is refused before the 101; bad frames before authentication close that socket only', async () => {
    const path = `/deployments-stream/apps/${APP}`;
    // A credential given at upgrade time is checked first: no 101 for a wrong one, nor for another user's app.
    expect((await rawUpgrade(port, path, { Authorization: 'Bearer forged' })).status).toBe(401);
    expect(
      (await rawUpgrade(port, path, { Authorization: `Basic ${Buffer.from(`:${TOKENS.other}`).toString('base64')}` }))
        .status,
    ).toBe(404);
    console.log(
      'deployments stream:',
      (await everyBadFrame(() => rawUpgrade(port, path), 'deployments stream')).join('; '),
    );
    // Before authentication a socket gets nothing and can send little: 64 KiB is over its bound.
    const c = await rawUpgrade(port, path);
    c.socket.write(frame({ opcode: 1, payload: Buffer.alloc(64 * 1024, 0x61) }));
    expect(await closedBy(c, 'the oversized pre-auth message to close the socket')).toBe(1009);
    c.destroy();
    // The same frames after a valid auth message (the clients' protocol) are handled the same way.
    const authed = await rawUpgrade(port, path);
    authed.socket.write(
      frame({ opcode: 1, payload: Buffer.from(JSON.stringify({ type: 'auth', data: { token: await bearer() } })) }),
    );
    await eventually(() => authed.data().includes('"type":"new"') || authed.data().includes('"type":"ping"'), {
      what: 'the replay after authentication',
    });
    authed.socket.write(BAD_FRAMES[0].bytes);
    expect(await closedBy(authed, 'the authenticated stream to close on a bad frame')).toBe(1002);
    authed.destroy();
    await alive();
  });

  it('logs stream (signed URL): every bad frame closes its socket, the process lives', async () => {
    const logsUrl = new URL(((await (await api(`/v1/apps/${APP}/logs`)).json()) as { logs_url: string }).logs_url);
    const path = `${logsUrl.pathname}${logsUrl.search}&stream=true`;
    console.log('logs stream:', (await everyBadFrame(() => rawUpgrade(port, path), 'logs stream')).join('; '));
  });

  it('one-off attach over WebSocket: every bad frame closes its terminal, the process lives', async () => {
    const opened: string[] = [];
    const open = async () => {
      const res = await api(`/v1/apps/${APP}/run`, {
        method: 'POST',
        body: JSON.stringify({ command: 'sh', detached: false }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { attach_url: string; container: { id: string } };
      opened.push(body.container.id);
      return rawUpgrade(port, new URL(body.attach_url).pathname);
    };
    console.log('attach (WebSocket):', (await everyBadFrame(open, 'attach WebSocket')).join('; '));
    // The terminals closed by bad frames took their containers with them.
    await eventually(
      async () => {
        const ps = ((await (await api(`/v1/apps/${APP}/ps`)).json()) as { containers: { id: string }[] }).containers;
        return !ps.some((c) => opened.includes(c.id));
      },
      { timeoutMs: 60_000, what: 'the one-offs of the closed terminals to be gone' },
    );
  }, 120_000);

  it('one-off attach over CONNECT: WebSocket frames, garbage and an abrupt reset do not hurt the process', async () => {
    for (const bytes of [
      ...BAD_FRAMES.map((b) => b.bytes),
      Buffer.from([0xff, 0x00, 0xfe, 0x1b, 0x5b]),
      Buffer.alloc(256 * 1024, 0xff),
    ]) {
      const res = await api(`/v1/apps/${APP}/run`, {
        method: 'POST',
        body: JSON.stringify({ command: 'cat', detached: false }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const path = new URL(((await res.json()) as { attach_url: string }).attach_url).pathname;
      const c = await rawRequest(port, `CONNECT ${path} HTTP/1.1`, { Host: `127.0.0.1:${port}` });
      expect(c.status).toBe(200);
      c.socket.write(bytes);
      c.socket.resetAndDestroy();
    }
    // A CONNECT elsewhere is refused, and the process is there.
    expect((await rawRequest(port, 'CONNECT /v1/apps HTTP/1.1', { Host: `127.0.0.1:${port}` })).status).toBe(404);
    await alive();
  }, 120_000);

  it('router WebSocket proxying: bad frames pass through to the app, which closes that tunnel; the emulator lives', async () => {
    const routerPort = p.routerPort;
    const results: string[] = [];
    for (const bad of BAD_FRAMES) {
      const c = await rawUpgrade(routerPort, '/', { Host: `${APP}.localhost:${routerPort}` });
      expect(c.status, c.head).toBe(101);
      c.socket.write(bad.bytes);
      const code = await closedBy(c, `the router tunnel to close after ${bad.name}`);
      results.push(`${bad.name}: ${code}`);
      expect(bad.codes).toContain(code);
      c.destroy();
    }
    console.log('router proxy:', results.join('; '));
    // A client that resets mid-handshake, and one that sends frames then vanishes.
    const half = await rawUpgrade(routerPort, '/', { Host: `${APP}.localhost:${routerPort}` });
    half.socket.write(frame({ opcode: 2, length: 1000n, payload: Buffer.alloc(10) }).subarray(0, 12));
    half.socket.resetAndDestroy();
    await alive();
    expect(upstreamErrors.length).toBeGreaterThanOrEqual(BAD_FRAMES.length);
  });

  it("attach URLs are checked against current access: a removed collaborator's terminal closes and their URLs are refused", async () => {
    const asOther = (path: string, init: RequestInit = {}) =>
      api(path, { ...init, headers: { authorization: `Basic ${Buffer.from(`:${TOKENS.other}`).toString('base64')}` } });
    const added = await api(`/v1/apps/${APP}/collaborators`, {
      method: 'POST',
      body: JSON.stringify({ collaborator: { email: 'other@example.test' } }),
    });
    expect(added.status).toBe(201);
    const collaboratorId = ((await added.json()) as { collaborator: { id: string } }).collaborator.id;
    const run = async () => {
      const res = await asOther(`/v1/apps/${APP}/run`, {
        method: 'POST',
        body: JSON.stringify({ command: 'sh', detached: false }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { attach_url: string; container: { id: string } };
    };
    const attached = await run();
    const waiting = await run();
    const terminal = await wsTerminal(attached.attach_url);
    terminal.ws.send('echo $((6*7))\n');
    await terminal.waitFor(/42/);

    expect((await api(`/v1/apps/${APP}/collaborators/${collaboratorId}`, { method: 'DELETE' })).status).toBe(204);
    // The open terminal is closed, and its container goes with it.
    expect((await terminal.closed).reason).toMatch(/no longer has access/);
    // The URL not yet used is refused on every path: WebSocket, CONNECT, /wait.
    const path = new URL(waiting.attach_url).pathname;
    expect((await rawUpgrade(port, path)).status).toBe(401);
    expect((await rawRequest(port, `CONNECT ${path} HTTP/1.1`, { Host: `127.0.0.1:${port}` })).status).toBe(401);
    expect((await fetch(`${waiting.attach_url}/wait`)).status).toBe(401);
    expect((await api(`/v1/apps/${APP}/containers/${waiting.container.id}/stop`, { method: 'POST' })).status).toBe(202);
    await eventually(
      async () => {
        const ps = ((await (await api(`/v1/apps/${APP}/ps`)).json()) as { containers: { id: string }[] }).containers;
        return !ps.some((c) => c.id === attached.container.id || c.id === waiting.container.id);
      },
      { timeoutMs: 60_000, what: 'both one-offs of the removed collaborator to be gone' },
    );
    await alive();
  }, 120_000);

  async function bearer(): Promise<string> {
    const res = await fetch(`${p.api}/v1/tokens/exchange`, { method: 'POST', headers: { authorization: basic } });
    return ((await res.json()) as { token: string }).token;
  }
});
