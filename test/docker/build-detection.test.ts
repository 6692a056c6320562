import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { c as tarCreate } from 'tar';
import { startEmulator, type Harness } from '../harness.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { removeInstance, docker, dockerPs } from '../support/docker-cli.ts';
import { FAST, routerGet, waitForDeployment } from '../support/apps.ts';

// Detection as on the platform (issue 34, point 4): code a buildpack detects is built by that buildpack
// whatever else it holds, a Dockerfile included (the platform's Node buildpack ignores it); a Dockerfile is
// built only where no buildpack applies. Observed through the router and in the running container.
const LONG = 600_000;

const NODE_SERVER =
  "require('http').createServer((q, s) => s.end('node ' + process.version)).listen(process.env.PORT);\n";
// What the Dockerfile's image would answer, had it been built: another server, on the busybox stack.
const DOCKERFILE = `FROM ${DEFAULT_STACK_IMAGE}\nRUN mkdir -p /www && echo from the Dockerfile > /www/index.html\nCMD httpd -f -p $PORT -h /www\n`;

describe('buildpack or Dockerfile: the choice the platform makes (real Docker)', () => {
  let h: Harness;
  let instance = '';
  const dirs: string[] = [];
  const apps: string[] = [];

  const deploy = async (app: string, content: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), `emu-${app}-`));
    dirs.push(dir);
    mkdirSync(join(dir, app));
    for (const [name, text] of Object.entries(content)) writeFileSync(join(dir, app, name), text);
    const archive = join(dir, `${app}.tar.gz`);
    await tarCreate({ gzip: true, file: archive, cwd: dir }, [app]);
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: app } } })).status).toBe(201);
    apps.push(app);
    const body = { deployment: { source_url: archive } };
    expect((await h.call('POST', `/v1/apps/${app}/deployments`, { body })).status).toBe(201);
    const d = await waitForDeployment(h, app, undefined, LONG);
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
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }, LONG);

  it(
    'a package.json next to a Dockerfile: the Node.js buildpack builds it, and the output says the Dockerfile is not used',
    async () => {
      const pkg = { name: 'with-dockerfile', scripts: { start: 'node server.js' } };
      const { d, output } = await deploy('node-and-dockerfile', {
        'package.json': JSON.stringify(pkg),
        'server.js': NODE_SERVER,
        Dockerfile: DOCKERFILE,
      });
      expect(d.status, output).toBe('success');
      expect(output).toContain(
        '-----> Dockerfile not used: package.json makes this a node app, built by its buildpack as on the platform',
      );
      expect(output).toContain('-----> Node.js app detected');
      const version = docker('exec', await webContainer('node-and-dockerfile'), 'node', '--version');
      expect(version).toMatch(/^v\d+\./);
      expect((await routerGet(h.emu.urls.routerPort, 'node-and-dockerfile')).body).toBe(`node ${version}`);
    },
    LONG,
  );

  it(
    'a Dockerfile where no buildpack applies is built, and the output says it is a convenience of the emulator',
    async () => {
      const { d, output } = await deploy('only-dockerfile', { Dockerfile: DOCKERFILE });
      expect(d.status, output).toBe('success');
      expect(output).toContain(
        '-----> Dockerfile detected: building it (no buildpack applies; an emulator convenience, the platform builds with buildpacks only)',
      );
      expect((await routerGet(h.emu.urls.routerPort, 'only-dockerfile')).body).toBe('from the Dockerfile\n');
    },
    LONG,
  );
});
