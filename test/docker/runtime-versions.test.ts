import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { c as tarCreate } from 'tar';
import { startEmulator, type Harness } from '../harness.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { removeInstance, docker, dockerPs } from '../support/docker-cli.ts';
import { FAST, routerGet, waitForDeployment } from '../support/apps.ts';

// Runtime versions (issue 25): the version an app asks for picks the Debian suite of its stack image.
// Observed in the app's running container (node --version, python3 --version), and through the router;
// a version no suite has ends the deployment in build-error with the versions that exist.
const LONG = 900_000;

const NODE_SERVER = "require('http').createServer((q, s) => s.end(process.version)).listen(process.env.PORT);\n";
const PYTHON_SERVER = `import os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(sys.version.split()[0].encode())
HTTPServer(("0.0.0.0", int(os.environ["PORT"])), H).serve_forever()
`;

describe('runtime versions asked by the app (real Docker, Debian-built stacks)', () => {
  let h: Harness;
  let instance = '';
  const files: string[] = [];
  const apps: string[] = [];
  const archives = new Map<string, string>();

  /** Deploys the files as an archive to a new app; resolves the deployment and its output. */
  const deploy = async (app: string, content: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), `emu-${app}-`));
    files.push(dir);
    mkdirSync(join(dir, app));
    for (const [name, text] of Object.entries(content)) writeFileSync(join(dir, app, name), text);
    const archive = join(dir, `${app}.tar.gz`);
    await tarCreate({ gzip: true, file: archive, cwd: dir }, [app]);
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: app } } })).status).toBe(201);
    apps.push(app);
    archives.set(app, archive);
    return redeploy(app);
  };
  /** Deploys the app's archive again; resolves the new deployment and its output. */
  const redeploy = async (app: string) => {
    const before = (await h.call('GET', `/v1/apps/${app}/deployments`)).body.deployments[0]?.id;
    const source_url = archives.get(app);
    expect((await h.call('POST', `/v1/apps/${app}/deployments`, { body: { deployment: { source_url } } })).status).toBe(
      201,
    );
    const finished = (x: { id: string; status: string }) =>
      x.id !== before && ['success', 'build-error', 'crashed-error', 'timeout-error'].includes(x.status);
    const d = await waitForDeployment(h, app, finished, LONG);
    return { d, output: (await h.call('GET', `/v1/apps/${app}/deployments/${d.id}/output`)).text as string };
  };
  const webContainer = async (app: string) => {
    const appId = (await h.call('GET', `/v1/apps/${app}`)).body.app.id as string;
    const [web] = dockerPs([`${LABELS.appId}=${appId}`, `${LABELS.type}=web`]);
    if (!web) throw new Error(`no running web container for ${app}`);
    return web.id;
  };

  beforeAll(async () => {
    h = await startEmulator({ intervals: { ...FAST, bootTimeoutMs: 60_000 } });
    instance = h.emu.instanceId;
  });
  afterAll(async () => {
    for (const app of apps) await h.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
    await h.stop();
    removeInstance(instance);
    for (const f of files) rmSync(f, { recursive: true, force: true });
  }, LONG);

  it(
    'engines.node "20.x": the app runs Node.js 20 from Debian trixie',
    async () => {
      const pkg = { name: 'node20', engines: { node: '20.x' }, scripts: { start: 'node server.js' } };
      const { d, output } = await deploy('node20', { 'package.json': JSON.stringify(pkg), 'server.js': NODE_SERVER });
      expect(d.status, output).toBe('success');
      expect(output).toContain('Using Node.js 20.19.2 from Debian trixie (engines.node in package.json asks for 20.x)');
      expect(docker('exec', await webContainer('node20'), 'node', '--version')).toBe('v20.19.2');
      expect((await routerGet(h.emu.urls.routerPort, 'node20')).body).toBe('v20.19.2');
    },
    LONG,
  );

  it(
    'a redeployment reuses the dependency layer; after DELETE …/caches/deployment it is built again',
    async () => {
      const again = await redeploy('node20');
      expect(again.d.status, again.output).toBe('success');
      expect(again.output).toContain('Reusing the dependency layer from the build cache');
      expect(again.output).not.toContain('Installing dependencies');
      expect((await h.call('DELETE', '/v1/apps/node20/caches/deployment')).status).toBe(204);
      const fresh = await redeploy('node20');
      expect(fresh.d.status, fresh.output).toBe('success');
      expect(fresh.output).toContain('-----> Installing dependencies\n       Installing node modules (package.json)');
      expect(fresh.output).not.toContain('Reusing the dependency layer');
      expect(docker('exec', await webContainer('node20'), 'node', '--version')).toBe('v20.19.2');
    },
    LONG,
  );

  it(
    'no engines: the default stack (Debian bookworm, Node.js 18)',
    async () => {
      const pkg = { name: 'node-default', scripts: { start: 'node server.js' } };
      const { d, output } = await deploy('node-default', {
        'package.json': JSON.stringify(pkg),
        'server.js': NODE_SERVER,
      });
      expect(d.status, output).toBe('success');
      expect(docker('exec', await webContainer('node-default'), 'node', '--version')).toBe('v18.20.4');
    },
    LONG,
  );

  it(
    'runtime.txt python-3.13: the app runs Python 3.13 from Debian trixie',
    async () => {
      const { d, output } = await deploy('python313', {
        'runtime.txt': 'python-3.13.0\n',
        'requirements.txt': '',
        'app.py': PYTHON_SERVER,
      });
      expect(d.status, output).toBe('success');
      expect(docker('exec', await webContainer('python313'), 'python3', '--version')).toBe('Python 3.13.5');
      expect((await routerGet(h.emu.urls.routerPort, 'python313')).body).toBe('3.13.5');
    },
    LONG,
  );

  it(
    'a version no Debian suite has: build-error naming the versions that exist, nothing started',
    async () => {
      const pkg = { name: 'node22', engines: { node: '>=22' }, scripts: { start: 'node server.js' } };
      const node = await deploy('node22', { 'package.json': JSON.stringify(pkg), 'server.js': NODE_SERVER });
      expect(node.d.status).toBe('build-error');
      expect(node.output).toContain('Node.js ">=22" (engines.node in package.json) is not available');
      expect(node.output).toContain('which have Node.js 18.20.4 (Debian bookworm) and 20.19.2 (Debian trixie)');
      const ruby = await deploy('ruby27-app', { Gemfile: '', '.ruby-version': '2.7.8\n', 'app.rb': 'puts 1\n' });
      expect(ruby.d.status).toBe('build-error');
      expect(ruby.output).toContain('Ruby "2.7.8" (.ruby-version) is not available');
      const appId = (await h.call('GET', '/v1/apps/node22')).body.app.id as string;
      expect(dockerPs([`${LABELS.appId}=${appId}`], true)).toEqual([]);
    },
    LONG,
  );
});
