import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { c as tarCreate } from 'tar';
import { afterAll, describe, expect, it } from 'vitest';
import { type UpHandle, up } from '../../src/cli/up/up.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FAST, waitForDeployment, waitForOperation } from '../support/apps.ts';
import { dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// The TCP gateway addon (issue 34, point 5), as the platform documents it: the app's `tcp` containers listen
// on $PORT and are reached at TCP_URL. Here TCP_URL is tcp://127.0.0.1:<port> of the host; the test
// connects to it from the host and the answer comes from the process in the container (its $CONTAINER).
// Then `up` of a project like the platform's MQTT sample (tcp-gateway next to a MongoDB stand-in).
const LONG = 600_000;
const TCP_SERVER =
  "require('net').createServer((s) => { s.on('error', () => {}); s.on('data', (d) => s.end(process.env.CONTAINER + ' ' + d.toString().trim())); })" +
  '.listen(process.env.PORT);\n';
const WEB_SERVER = "require('http').createServer((q, s) => s.end('web')).listen(process.env.PORT);\n";
const PROJECT = {
  'package.json': JSON.stringify({ name: 'tcp-sample', scripts: { start: 'node web.js' } }),
  Procfile: 'web: node web.js\ntcp: node tcp.js\n',
  'web.js': WEB_SERVER,
  'tcp.js': TCP_SERVER,
};

/** Sends a line to host:port; resolves what came back before the connection closed ('' when closed at once). */
function exchange(url: string, line: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((ok, fail) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let got = '';
    socket.setTimeout(20_000, () => socket.destroy(new Error(`no answer from ${url} within 20 s`)));
    socket.on('connect', () => socket.write(`${line}\n`));
    socket.on('data', (d) => (got += d));
    socket.on('error', fail);
    socket.on('close', () => ok(got));
  });
}

const root = mkdtempSync(join(tmpdir(), 'emu-tcp-gateway-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('tcp-gateway addon through the API (real Docker)', () => {
  const dataDir = join(root, 'data');
  let h: Harness;
  let tcpUrl = '';
  let addonId = '';
  const instances = new Set<string>();
  const start = async () => {
    h = await startEmulator({ inMemory: false, dataDir, intervals: { ...FAST, bootTimeoutMs: 60_000 } });
    instances.add(h.emu.instanceId);
  };
  const variable = async () =>
    (await h.call('GET', '/v1/apps/tcp-app/variables')).body.variables.find((v: any) => v.name === 'TCP_URL')?.value;
  const tcpContainers = async () => {
    const appId = (await h.call('GET', '/v1/apps/tcp-app')).body.app.id;
    return dockerPs([`${LABELS.appId}=${appId}`, `${LABELS.type}=tcp`]).filter((c) => c.state === 'running');
  };

  afterAll(async () => {
    await h?.call('DELETE', '/v1/apps/tcp-app?current_name=tcp-app').catch(() => undefined);
    await h?.stop();
    for (const i of instances) removeInstance(i);
  }, LONG);

  it(
    'provisioning sets TCP_URL = tcp://127.0.0.1:<port>; with no tcp container running a connection is closed',
    async () => {
      await start();
      expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'tcp-app' } } })).status).toBe(201);
      const r = await h.call('POST', '/v1/apps/tcp-app/addons', {
        body: { addon: { addon_provider_id: 'tcp-gateway', plan_id: 'tcplb' } },
      });
      expect(r.status, r.text).toBe(201);
      addonId = r.body.addon.id;
      expect(r.body.addon.addon_provider).toMatchObject({ id: 'tcp-gateway', name: 'TCP Gateway' });
      await eventually(
        async () => (await h.call('GET', `/v1/apps/tcp-app/addons/${addonId}`)).body.addon.status === 'running',
        { what: 'the gateway running' },
      );
      tcpUrl = await variable();
      expect(tcpUrl).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
      expect(await exchange(tcpUrl, 'anyone?')).toBe('');
    },
    LONG,
  );

  it(
    'the app’s tcp containers get $PORT, and each connection from the host reaches one of them in turn',
    async () => {
      mkdirSync(join(root, 'code', 'tcp-app'), { recursive: true });
      for (const [f, t] of Object.entries(PROJECT)) writeFileSync(join(root, 'code', 'tcp-app', f), t);
      const archive = join(root, 'tcp-app.tar.gz');
      await tarCreate({ gzip: true, file: archive, cwd: join(root, 'code') }, ['tcp-app']);
      const body = { deployment: { source_url: archive } };
      expect((await h.call('POST', '/v1/apps/tcp-app/deployments', { body })).status).toBe(201);
      const d = await waitForDeployment(h, 'tcp-app', undefined, LONG);
      expect(d.status).toBe('success');
      // Right after the deployment the app may still be booting (409), as the platform answers: asked again.
      const scale = await eventually(
        async () => {
          const r = await h.call('POST', '/v1/apps/tcp-app/scale', {
            body: { containers: [{ name: 'tcp', amount: 2 }] },
          });
          return r.status === 409 ? null : r;
        },
        { timeoutMs: 60_000, what: 'the scale accepted' },
      );
      expect(scale.status, scale.text).toBe(202);
      expect((await waitForOperation(h, scale.headers.get('location') ?? '')).status).toBe('done');
      expect(await tcpContainers()).toHaveLength(2);
      // A container is given connections once it runs; its process may listen a moment later (Docker's published
      // port accepts the handshake meanwhile, then closes): wait until both answered, then two in a row reach both.
      const seen = new Set<string>();
      await eventually(
        async () => {
          seen.add(await exchange(tcpUrl, 'hello'));
          return seen.has('tcp-1 hello') && seen.has('tcp-2 hello');
        },
        { timeoutMs: 60_000, what: 'both tcp containers answering through the gateway' },
      );
      const answers = [await exchange(tcpUrl, 'hello'), await exchange(tcpUrl, 'hello')].sort();
      expect(answers).toEqual(['tcp-1 hello', 'tcp-2 hello']);
    },
    LONG,
  );

  it(
    'after a restart of the emulator TCP_URL is the same and answers; deleting the addon closes the port and removes TCP_URL',
    async () => {
      await h.stop();
      await start();
      expect(await variable()).toBe(tcpUrl);
      expect(await exchange(tcpUrl, 'again')).toMatch(/^tcp-[12] again$/);
      expect((await h.call('DELETE', `/v1/apps/tcp-app/addons/${addonId}`)).status).toBe(204);
      await expect(exchange(tcpUrl, 'gone?')).rejects.toThrow(/ECONNREFUSED/);
      expect(await variable()).toBeUndefined();
    },
    LONG,
  );
});

describe('up with tcp-gateway and a MongoDB stand-in in scalingo.json, like the platform’s MQTT sample (real Docker)', () => {
  const dir = join(root, 'mqtt-sample');
  let handle: UpHandle | undefined;
  afterAll(async () => {
    await handle?.stop().catch(() => undefined);
    const instance = handle?.emulator?.instanceId;
    if (instance) removeInstance(instance);
  }, LONG);

  it(
    'up starts; it warns in one line that MongoDB is a stand-in, prints tcp://127.0.0.1:<port>, and the tcp container answers there',
    async () => {
      mkdirSync(dir, { recursive: true });
      for (const [f, t] of Object.entries(PROJECT)) writeFileSync(join(dir, f), t);
      const manifest = {
        name: 'MQTT-like sample',
        formation: { web: { amount: 1, size: 'S' } },
        addons: [{ plan: 'mongodb:mongo-sandbox' }, { plan: 'tcp-gateway:tcplb' }],
      };
      writeFileSync(join(dir, 'scalingo.json'), JSON.stringify(manifest));
      const out = new PassThrough();
      let printed = '';
      out.on('data', (c) => (printed += c));
      handle = await up({
        dir,
        dataDir: join(root, 'up-data'),
        port: 0,
        routerPort: 0,
        sshPort: 0,
        watch: false,
        configFile: undefined,
        out,
        color: false,
      });
      expect(handle.firstDeployment?.status).toBe('success');
      expect(printed).toContain(
        'Warning: scalingo-mongodb is a stand-in — no MongoDB server runs in the emulator, so the app gets no URL variable for it',
      );
      expect(printed).toMatch(/Formation from scalingo\.json: web=1:S tcp=1 \(tcp: for the tcp-gateway addon\)/);
      // The deployment's own output names the stand-in too (what code that connects to MongoDB would fail on).
      expect(printed).toContain(
        'build        | -----> Stand-in addons, no server runs for them in the emulator and their URL variables are not set: scalingo-mongodb (MongoDB)',
      );
      const url = /tcp-gateway {1,}(tcp:\/\/127\.0\.0\.1:\d+)/.exec(printed)?.[1];
      expect(url, printed).toBeDefined();
      expect(handle.addons.find((a) => a.kind === 'tcp-gateway')?.url).toBe(url);
      const answer = await eventually(async () => (await exchange(url ?? '', 'mqtt?')) || null, {
        timeoutMs: 60_000,
        what: 'the tcp container answering through the gateway',
      });
      expect(answer).toBe('tcp-1 mqtt?');
    },
    LONG,
  );
});
