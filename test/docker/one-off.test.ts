import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator, TOKENS } from '../harness.ts';
import { copyFixture, FAST, waitForStatus } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';
import { logsUrl, readLogs } from '../support/logs.ts';
import { connectTerminal, runAttached, upload, wsTerminal } from '../support/terminal.ts';

// #14–#18 observed in real Docker: attached and detached one-offs, terminals over CONNECT and
// WebSocket, resize, uploads, signals, stop, /wait.
const MB = 1024 * 1024;
const APP = 'oneoff-app';

describe('one-off containers (real Docker)', () => {
  let h: Harness;
  const dir = copyFixture('busybox-web');
  const inDocker = (containerId: string) =>
    dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.containerId}=${containerId}`], true);
  const psEntry = async (id: string) =>
    (
      (await h.call('GET', `/v1/apps/${APP}/ps`)).body.containers as { id: string; state: string; label: string }[]
    ).find((c) => c.id === id);
  const waitExit = async (attachUrl: string) => (await fetch(`${attachUrl}/wait`)).json();

  beforeAll(async () => {
    h = await startEmulator({
      logLevel: (process.env.EMU_LOG as never) ?? 'silent',
      intervals: { ...FAST, stopGraceSeconds: 3 },
      oneOff: { uploadMaxBytes: MB },
      apps: [{ name: APP, dir }],
    });
    await waitForStatus(h, APP, 'running');
  });
  afterAll(async () => {
    await h.stop();
    removeInstance(h.emu.instanceId);
    rmSync(dir, { recursive: true, force: true });
  });

  it('run (attached): 200 with the container and attach_url, Location to a start-one-off operation; created in Docker, not started', async () => {
    const res = await h.call('POST', `/v1/apps/${APP}/run`, {
      body: {
        command: 'sh',
        env: { TERM: 'xterm-256color', CLIENT_OS: 'linux', GREETING: 'hi' },
        size: 'L',
        detached: false,
        has_uploads: false,
      },
    });
    expect(res.status).toBe(200);
    const c = res.body.container;
    expect(c).toMatchObject({
      type: 'one-off',
      state: 'booting',
      command: 'sh',
      size: 'L',
      memory: 1024 * MB,
      app: { name: APP },
    });
    expect(c.label).toBe(`one-off-${c.type_index}`);
    expect(res.body.attach_url).toMatch(new RegExp(`^${h.api}/attach/[0-9a-f]{24}\\.\\d+\\.[A-Za-z0-9_-]{43}$`));
    const location = res.headers.get('location')!;
    expect(location).toMatch(new RegExp(`^${h.api}/v1/apps/${APP}/operations/[0-9a-f]{24}$`));
    expect(res.body.operation_url).toBe(location);

    const op = await eventually(async () => {
      const o = (await h.call('GET', new URL(location).pathname)).body.operation;
      return o.status === 'done' ? o : null;
    });
    expect(op).toMatchObject({
      type: 'start-one-off',
      start_one_off_data: { attach_url: res.body.attach_url, container_id: c.id },
    });
    expect(await psEntry(c.id)).toMatchObject({ label: c.label, state: 'booting' });
    const [engine] = inDocker(c.id);
    expect(engine.state).toBe('created');
    expect(docker('inspect', '-f', '{{.Config.Tty}} {{.Config.OpenStdin}} {{.HostConfig.Memory}}', engine.id)).toBe(
      `true true ${1024 * MB}`,
    );
    const env = docker('inspect', '-f', '{{range .Config.Env}}{{println .}}{{end}}', engine.id).split('\n');
    expect(env).toEqual(
      expect.arrayContaining([
        'GREETING=hi',
        `APP=${APP}`,
        `CONTAINER=${c.label}`,
        expect.stringMatching(/^SCALINGO_USER_ID=us-/),
      ]),
    );
    const ev = (await h.call('GET', `/v1/apps/${APP}/events`)).body.events.find(
      (e: { type: string }) => e.type === 'run',
    );
    expect(ev.type_data).toEqual({ command: 'sh', audit_log_id: '', audit_log_size: 0, detached: false });

    // Stopping a one-off that never started: no container is left.
    expect((await h.call('POST', `/v1/apps/${APP}/containers/${c.id}/stop`)).status).toBe(202);
    await eventually(() => inDocker(c.id).length === 0, { what: 'the never-started one-off to be removed' });
  });

  it('CONNECT terminal: 200 OK alone, then a shell — echo $((6*7)) gives 42, PUT resizes the TTY, exit code through /wait', async () => {
    const { attachUrl, container } = await runAttached(h, APP, 'sh');
    const t = await connectTerminal(attachUrl);
    expect(t.status).toBe(200);
    expect(t.firstChunk).toBe('HTTP/1.1 200 OK\r\n\r\n');
    await eventually(() => inDocker(container.id)[0]?.state === 'running', {
      what: 'the one-off to start once attached',
    });
    await eventually(async () => (await psEntry(container.id))?.state === 'running', {
      what: 'ps to show the one-off running',
    });
    t.write('echo $((6*7))\n');
    await t.waitFor(/\r?\n42\r?\n/);
    t.write('echo attached-only-$((3*5))\n');
    await t.waitFor(/attached-only-15/);

    // The Go CLI sends the sizes as strings; the DOC as integers.
    const put = await fetch(attachUrl, { method: 'PUT', body: JSON.stringify({ width: '100', height: '30' }) });
    expect(put.status).toBe(200);
    t.write('stty size\n');
    await t.waitFor(/\r?\n30 100\r?\n/);
    expect((await fetch(attachUrl, { method: 'PUT', body: JSON.stringify({ width: 120, height: 40 }) })).status).toBe(
      200,
    );
    t.write('stty size\n');
    await t.waitFor(/\r?\n40 120\r?\n/);
    // A terminal without a size: the CLI sends "0" × "0" — accepted, and the TTY keeps its size.
    expect((await fetch(attachUrl, { method: 'PUT', body: JSON.stringify({ width: '0', height: '0' }) })).status).toBe(
      200,
    );
    t.write('stty size\n');
    await t.waitFor(/\r?\n40 120\r?\n[\s\S]*\r?\n40 120\r?\n/);
    const bad = await fetch(attachUrl, { method: 'PUT', body: JSON.stringify({ width: 'wide', height: -1 }) });
    expect(bad.status).toBe(422);
    expect(Object.keys((await bad.json()).errors).sort()).toEqual(['height', 'width']);

    t.write('exit 3\n');
    await t.ended;
    expect(await waitExit(attachUrl)).toEqual({ exit_code: 3 });
    await eventually(() => inDocker(container.id).length === 0, { what: 'the exited one-off to leave Docker' });
    expect(await psEntry(container.id)).toBeUndefined();
    // The container is gone: its URL no longer attaches.
    expect((await connectTerminal(attachUrl)).status).toBe(404);
  });

  it('WebSocket terminal: input as text, output as binary, resize control message, exit message then close', async () => {
    const { attachUrl } = await runAttached(h, APP, 'sh');
    const t = await wsTerminal(attachUrl);
    t.ws.send('echo $((6*7))\n');
    await t.waitFor(/\r?\n42\r?\n/);
    t.ws.send(JSON.stringify({ type: 'resize', width: 90, height: 20 }));
    // The resize is applied asynchronously: ask until the TTY reports it.
    await eventually(
      async () => {
        t.ws.send('stty size\n');
        await new Promise((r) => setTimeout(r, 200));
        return /\r?\n20 90\r?\n/.test(t.output());
      },
      { what: 'the TTY to be 20x90' },
    );
    t.ws.send(Buffer.from('exit 5\n'));
    expect(await t.closed).toMatchObject({ code: 1000 });
    expect(t.controls).toEqual([{ type: 'exit', exit_code: 5 }]);
    expect(await waitExit(attachUrl)).toEqual({ exit_code: 5 });
    // A second terminal on a used URL is refused before the handshake.
    await expect(wsTerminal(attachUrl)).rejects.toMatchObject({ status: 404 });
  });

  it('uploads land in /tmp/uploads before attaching; names are reduced to their last segment; refused once attached', async () => {
    const { attachUrl } = await runAttached(h, APP, 'sh');
    expect(await upload(attachUrl, 'hello.txt', 'uploaded content\n')).toEqual({ status: 200, text: '' });
    expect((await upload(attachUrl, '../../evil.txt', 'nope\n')).status).toBe(200);
    const dots = await upload(attachUrl, '..', 'x');
    expect(dots.status).toBe(422);
    expect(JSON.parse(dots.text).errors.file[0]).toContain('not a usable file name');
    expect((await upload(attachUrl, 'big.bin', Buffer.alloc(MB + 1))).status).toBe(413);
    const noField = await upload(attachUrl, 'x.txt', 'x', 'document');
    expect(noField.status).toBe(422);
    expect(JSON.parse(noField.text).errors).toHaveProperty('file');

    const t = await connectTerminal(attachUrl);
    t.write('cat /tmp/uploads/hello.txt; ls /tmp/uploads; [ -e /evil.txt ] || echo no-evil-at-root\n');
    await t.waitFor(/uploaded content\r?\n/);
    await t.waitFor(/evil\.txt\s+hello\.txt/);
    await t.waitFor(/no-evil-at-root/);
    const late = await upload(attachUrl, 'late.txt', 'late');
    expect(late.status).toBe(409);
    expect(JSON.parse(late.text).error).toMatch(/before attaching/);
    t.write('exit\n');
    await t.ended;
  });

  it('kill delivers SIGUSR1 to the process (by label); other signals 422; unknown container 404', async () => {
    const { attachUrl, container } = await runAttached(
      h,
      APP,
      "trap 'echo got-usr1' USR1; echo ready; while :; do sleep 0.2; done",
    );
    const t = await connectTerminal(attachUrl);
    await t.waitFor(/ready/);
    const kill = await h.call('POST', `/v1/apps/${APP}/containers/${container.label}/kill`, {
      body: { signal: 'SIGUSR1' },
    });
    expect(kill.status).toBe(204);
    await t.waitFor(/got-usr1/);

    const hup = await h.call('POST', `/v1/apps/${APP}/containers/${container.id}/kill`, { body: { signal: 'SIGHUP' } });
    expect(hup.status).toBe(422);
    expect(hup.body.errors.signal[0]).toContain('SIGUSR1 or SIGUSR2');
    expect(
      (await h.call('POST', `/v1/apps/${APP}/containers/${container.id}/kill`, { body: {} })).body.errors,
    ).toHaveProperty('signal');
    const unknown = await h.call('POST', `/v1/apps/${APP}/containers/one-off-99999/kill`, {
      body: { signal: 'SIGUSR1' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.resource).toBe('container');
    // The platform records no event for a signal (no such type in go-scalingo): the CLI would print "Unknown event".
    expect(
      (await h.call('GET', `/v1/apps/${APP}/events`)).body.events.map((e: { type: string }) => e.type),
    ).not.toContain('kill_container');
    t.destroy();
  });

  it('a terminal going away mid-stream leaves no container behind', async () => {
    const { attachUrl, container } = await runAttached(h, APP, 'sh');
    const t = await connectTerminal(attachUrl);
    t.write('echo still-here\n');
    await t.waitFor(/\r?\nstill-here\r?\n/);
    t.destroy();
    await eventually(() => inDocker(container.id).length === 0, {
      timeoutMs: 20_000,
      what: 'the abandoned one-off to be removed (docker ps -a)',
    });
    expect(await psEntry(container.id)).toBeUndefined();
  });

  it('stop: 202, `stopping`, SIGTERM first then SIGKILL after the grace period, gone from Docker; only one-offs', async () => {
    const { attachUrl, container } = await runAttached(
      h,
      APP,
      "trap 'echo got-term' TERM; echo ready; while :; do sleep 0.2; done",
    );
    const t = await connectTerminal(attachUrl);
    await t.waitFor(/ready/);
    const stop = await h.call('POST', `/v1/apps/${APP}/containers/${container.id}/stop`);
    expect(stop.status).toBe(202);
    expect(stop.text).toBe('');
    // The trap survives SIGTERM: the container is `stopping` while Docker's grace period runs.
    expect(await psEntry(container.id)).toMatchObject({ state: 'stopping' });
    await t.waitFor(/got-term/);
    await eventually(() => inDocker(container.id).length === 0, {
      timeoutMs: 3_000 + 10_000,
      what: 'the stopped one-off to leave Docker',
    });
    expect(await waitExit(attachUrl)).toEqual({ exit_code: 137 }); // SIGKILL, after the grace period
    expect(
      (await h.call('GET', `/v1/apps/${APP}/events`)).body.events.map((e: { type: string }) => e.type),
    ).not.toContain('stop_container');

    const web = ((await h.call('GET', `/v1/apps/${APP}/ps`)).body.containers as { id: string; type: string }[]).find(
      (c) => c.type === 'web',
    )!;
    const refused = await h.call('POST', `/v1/apps/${APP}/containers/${web.id}/stop`);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/only one-off containers can be stopped/);
    expect((await h.call('POST', `/v1/apps/${APP}/containers/nope/stop`)).body).toMatchObject({
      resource: 'container',
    });
  });

  it('detached: starts at once, output in the app logs under its label, gone from ps and Docker when it ends; no operation', async () => {
    const res = await h.call('POST', `/v1/apps/${APP}/run`, {
      body: { command: 'echo done-$((6*7))', detached: true },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('location')).toBeNull();
    expect(res.body).not.toHaveProperty('operation_url');
    const c = res.body.container;
    await eventually(async () => (await psEntry(c.id)) === undefined && inDocker(c.id).length === 0, {
      timeoutMs: 30_000,
      what: 'the detached one-off to end and leave ps and Docker',
    });
    const url = await logsUrl(h, APP);
    await eventually(
      async () => (await readLogs(url, { n: 500 })).lines.some((l) => l.includes(`[${c.label}] done-42`)),
      { what: 'the detached output in the app logs' },
    );
    // An attached one-off's output went to its terminal only (the CONNECT test above printed it).
    expect((await readLogs(url, { n: 500 })).lines.some((l) => l.includes('attached-only-15'))).toBe(false);
    const ev = (await h.call('GET', `/v1/apps/${APP}/events`)).body.events.find(
      (e: { type: string; type_data: { detached: boolean } }) => e.type === 'run' && e.type_data.detached,
    );
    expect(ev.type_data).toMatchObject({ command: 'echo done-$((6*7))', detached: true });
  });

  it("the emulator's own CLI: `run <app> -- <command>` attaches this process's stdin/stdout and exits with the command's code", async () => {
    const root = resolve(import.meta.dirname, '../..');
    const child = spawn(
      join(root, 'node_modules/.bin/tsx'),
      [join(root, 'src/main.ts'), 'run', APP, '--api', h.api, '--', 'sh'],
      { env: { ...process.env, EMULATOR_API_TOKEN: TOKENS.dev }, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (out += b));
    const code = new Promise<number | null>((ok) => child.on('exit', ok));
    child.stdin.write('echo $((6*7)); exit 4\n');
    expect(await code).toBe(4);
    expect(out).toMatch(/\r?\n42\r?\n/);
    // A detached run prints its label and returns at once.
    const detached = spawn(
      join(root, 'node_modules/.bin/tsx'),
      [join(root, 'src/main.ts'), 'run', APP, '--detached', '--api', h.api, '--token', TOKENS.dev, '--', 'true'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let dout = '';
    detached.stdout.on('data', (b) => (dout += b));
    expect(await new Promise((ok) => detached.on('exit', ok))).toBe(0);
    expect(dout).toMatch(/as one-off-\d+/);
  });

  it('refusals: never-deployed app, missing or blank command, bad size or env, unknown app; wrong attach token', async () => {
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'never-deployed' } } })).status).toBe(201);
    const never = await h.call('POST', '/v1/apps/never-deployed/run', { body: { command: 'sh' } });
    expect(never.status).toBe(400);
    expect(never.body.error).toMatch(/never been deployed/);
    expect((await h.call('POST', `/v1/apps/${APP}/run`, { body: {} })).body).toEqual({
      errors: { command: ['missing field'] },
    });
    expect((await h.call('POST', `/v1/apps/${APP}/run`, { body: { command: '  ' } })).status).toBe(422);
    const size = await h.call('POST', `/v1/apps/${APP}/run`, { body: { command: 'sh', size: 'XXL' } });
    expect(size.status).toBe(422);
    expect(size.body.errors.size[0]).toContain('is not a container size');
    expect(
      (await h.call('POST', `/v1/apps/${APP}/run`, { body: { command: 'sh', env: { 'A=B': 'x' } } })).body.errors,
    ).toHaveProperty('env');
    expect((await h.call('POST', '/v1/apps/no-such-app/run', { body: { command: 'sh' } })).status).toBe(404);
    expect((await h.call('POST', `/v1/apps/${APP}/run`, { body: { command: 'sh' }, as: null })).status).toBe(401);

    const { attachUrl } = await runAttached(h, APP, 'sh');
    const tampered = attachUrl.replace(/.$/, (ch) => (ch === 'A' ? 'B' : 'A'));
    expect((await connectTerminal(tampered)).status).toBe(401);
    expect((await fetch(`${tampered}/wait`)).status).toBe(401);
    expect((await fetch(`${h.api}/attach/garbage`, { method: 'PUT', body: '{"width":1,"height":1}' })).status).toBe(
      401,
    );
    expect((await upload(tampered, 'a.txt', 'a')).status).toBe(401);
    expect((await connectTerminal(`${h.api}/not-attach/x`)).status).toBe(404);
    // The real URL still works afterwards.
    const t = await connectTerminal(attachUrl);
    expect(t.status).toBe(200);
    t.write('exit 0\n');
    await t.ended;
    expect(await waitExit(attachUrl)).toEqual({ exit_code: 0 });
  });
});

describe('one-off containers with short timeouts (real Docker)', () => {
  let h: Harness;
  const dir = copyFixture('busybox-web');
  const APP2 = 'oneoff-short';
  beforeAll(async () => {
    h = await startEmulator({
      intervals: { ...FAST, oneOffIdleMs: 1500, attachUrlTtlMs: 4000 },
      oneOff: { maxPerApp: 2 },
      apps: [{ name: APP2, dir }],
    });
    await waitForStatus(h, APP2, 'running');
  });
  afterAll(async () => {
    await h.stop();
    removeInstance(h.emu.instanceId);
    rmSync(dir, { recursive: true, force: true });
  });
  const inDocker = (containerId: string) =>
    dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.containerId}=${containerId}`], true);

  it('a terminal with no data either way is closed after oneOffIdleMs and its container stopped; /wait answers 408', async () => {
    const { attachUrl, container } = await runAttached(h, APP2, 'sh');
    const t = await connectTerminal(attachUrl);
    await t.waitFor(/\S/); // the prompt
    await t.ended; // closed by the emulator, not by the test
    const wait = await fetch(`${attachUrl}/wait`);
    expect(wait.status).toBe(408);
    await eventually(() => inDocker(container.id).length === 0, {
      timeoutMs: 20_000,
      what: 'the idle one-off to be removed',
    });
  });

  it('an attach URL expires: refused (401) for attaching, uploads and resize of an unattached container', async () => {
    const { attachUrl } = await runAttached(h, APP2, 'sh');
    await eventually(
      async () => (await fetch(attachUrl, { method: 'PUT', body: '{"width":80,"height":24}' })).status === 401,
      { timeoutMs: 15_000, what: 'the attach URL to expire' },
    );
    const t = await connectTerminal(attachUrl);
    expect(t.status).toBe(401);
    await t.ended;
    expect(JSON.parse(t.output()).error).toMatch(/expired/);
    expect((await upload(attachUrl, 'a.txt', 'a')).status).toBe(401);
  });

  it('at most maxPerApp one-off containers at once (the platform: 10)', async () => {
    const live = ((await h.call('GET', `/v1/apps/${APP2}/ps`)).body.containers as { type: string }[]).filter(
      (c) => c.type === 'one-off',
    ).length;
    for (let i = live; i < 2; i++)
      expect((await h.call('POST', `/v1/apps/${APP2}/run`, { body: { command: 'sh' } })).status).toBe(200);
    const third = await h.call('POST', `/v1/apps/${APP2}/run`, { body: { command: 'sh' } });
    expect(third.status).toBe(422);
    expect(third.body.errors.container[0]).toMatch(/at most 2 one-off containers/);
  });
});
