import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { c as tarCreate } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FAST, routerGet, waitForDeployment } from '../support/apps.ts';
import { docker, removeInstance } from '../support/docker-cli.ts';

// builds.network (issue 34, point 6): the platform's builds reach the internet, the emulator's are offline
// by default. The test reaches nothing outside: it makes a user-defined Docker network with an HTTP server
// container of its own on it, gives that network's name to builds.network, and the app's build script
// fetches http://<server container>/token.txt by name; the same app with the default (none) fails and its
// output says why and names the setting; with `bridge` the build step has an interface beside loopback
// (no address is reached).
const LONG = 600_000;
const suffix = randomBytes(4).toString('hex');
const NETWORK = `emu-test-buildnet-${suffix}`;
const SERVER = `emu-test-buildnet-srv-${suffix}`;
const TOKEN = `token-${suffix}`;

const SERVE_FILE =
  "const fs = require('fs');\n" +
  "require('http').createServer((q, s) => s.end(fs.readFileSync('built.txt', 'utf8'))).listen(process.env.PORT);\n";
const FETCH = `fetch('http://${SERVER}/token.txt').then((r) => r.text()).then((t) => require('fs').writeFileSync('built.txt', t.trim()));\n`;
const INTERFACES =
  "require('fs').writeFileSync('built.txt', require('fs').readdirSync('/sys/class/net').sort().join(' '));\n";
const app = (build: string) => ({
  'package.json': JSON.stringify({ name: 'net', scripts: { build: 'node build.js', start: 'node server.js' } }),
  'build.js': build,
  'server.js': SERVE_FILE,
});

describe('builds.network: none (offline, the default), a network of the test, bridge (real Docker)', () => {
  const dirs: string[] = [];
  const emulators: Harness[] = [];

  const archiveOf = async (name: string, content: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), `emu-${name}-`));
    dirs.push(dir);
    mkdirSync(join(dir, name));
    for (const [file, text] of Object.entries(content)) writeFileSync(join(dir, name, file), text);
    const archive = join(dir, `${name}.tar.gz`);
    await tarCreate({ gzip: true, file: archive, cwd: dir }, [name]);
    return archive;
  };
  const deploy = async (h: Harness, name: string, content: Record<string, string>) => {
    expect((await h.call('POST', '/v1/apps', { body: { app: { name } } })).status).toBe(201);
    const body = { deployment: { source_url: await archiveOf(name, content) } };
    expect((await h.call('POST', `/v1/apps/${name}/deployments`, { body })).status).toBe(201);
    const d = await waitForDeployment(h, name, undefined, LONG);
    return { d, output: (await h.call('GET', `/v1/apps/${name}/deployments/${d.id}/output`)).text as string };
  };
  const emulator = async (network?: string) => {
    const h = await startEmulator({
      intervals: { ...FAST, bootTimeoutMs: 60_000 },
      ...(network ? { builds: { network } } : {}),
    });
    emulators.push(h);
    return h;
  };

  beforeAll(() => {
    docker('network', 'create', '--label', 'io.scalingo-emulator.test=build-network', NETWORK);
    docker(
      'run',
      '-d',
      '--name',
      SERVER,
      '--network',
      NETWORK,
      '--label',
      'io.scalingo-emulator.test=build-network',
      DEFAULT_STACK_IMAGE,
      'sh',
      '-c',
      `mkdir -p /www && echo ${TOKEN} > /www/token.txt && exec httpd -f -p 80 -h /www`,
    );
  });
  afterAll(async () => {
    for (const h of emulators) {
      const { apps } = (await h.call('GET', '/v1/apps')).body;
      for (const a of apps) await h.call('DELETE', `/v1/apps/${a.name}?current_name=${a.name}`).catch(() => undefined);
      await h.stop();
      removeInstance(h.emu.instanceId);
    }
    docker('rm', '-f', SERVER);
    docker('network', 'rm', NETWORK);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }, LONG);

  it(
    'builds.network names a Docker network: the build script fetches from a server on it, by name',
    async () => {
      const h = await emulator(NETWORK);
      const { d, output } = await deploy(h, 'fetch-at-build', app(FETCH));
      expect(d.status, output).toBe('success');
      expect((await routerGet(h.emu.urls.routerPort, 'fetch-at-build')).body).toBe(TOKEN);
    },
    LONG,
  );

  it(
    'builds.network none (the default): the same build fails, and its output says builds are offline and names the setting',
    async () => {
      const h = await emulator();
      const { d, output } = await deploy(h, 'fetch-offline', app(FETCH));
      expect(d.status, output).toBe('build-error');
      expect(output).toMatch(/EAI_AGAIN|ENOTFOUND|getaddrinfo/);
      expect(output).toContain('Builds run offline here (builds.network: "none")');
      expect(output).toContain('set builds.network to "bridge"');
    },
    LONG,
  );

  it(
    'builds.network names a network the engine does not have: build-error, and the output names the network and the setting',
    async () => {
      const h = await emulator(`emu-test-no-such-net-${suffix}`);
      const { d, output } = await deploy(h, 'no-such-network', app(INTERFACES));
      expect(d.status, output).toBe('build-error');
      expect(output).toContain(
        `!      builds.network is "emu-test-no-such-net-${suffix}", a network the Docker engine does not have:`,
      );
    },
    LONG,
  );

  it(
    'builds.network bridge: the build step has an interface beside loopback (the engine’s bridge)',
    async () => {
      const h = await emulator('bridge');
      const { d, output } = await deploy(h, 'bridge-build', app(INTERFACES));
      expect(d.status, output).toBe('success');
      const interfaces = (await routerGet(h.emu.urls.routerPort, 'bridge-build')).body.split(' ');
      expect(interfaces).toContain('lo');
      expect(interfaces.length).toBeGreaterThan(1);
    },
    LONG,
  );
});
