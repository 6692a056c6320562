import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create as tarCreate } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_RECIPES, type ImageRecipe, RECIPE_LABEL, recipeHash } from '../../src/runtime/image-recipes.ts';
import { debianSuite } from '../../src/runtime/rootfs.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { type EmulatorProcess, spawnEmulator } from '../reliability/emulator-process.ts';
import { FAST, routerGet, waitForAddon, waitForDeployment } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// Issue #20: the emulator builds each Debian-based image the first time a deployment or an addon
// needs it. This group runs before every other test file (vitest.config.ts). CI starts it with no
// emulator image and no package cache (SCALINGO_EMULATOR_TEST_FROM_SCRATCH=1), so there every image
// is built here, through the emulator, and observed in Docker. Elsewhere, on a machine that already has
// them, the tests that need a missing image are skipped (with CI=true they remove it first and run).
const FROM_SCRATCH = process.env.SCALINGO_EMULATOR_TEST_FROM_SCRATCH === '1';
// A first build downloads Debian packages: minutes on a fresh machine, more when several run at once.
const BUILD = 20 * 60_000;
const recipe = (id: string) => IMAGE_RECIPES.find((r) => r.id === id) as ImageRecipe;
const current = (r: ImageRecipe) =>
  spawnSync('docker', ['image', 'inspect', '-f', `{{index .Config.Labels "${RECIPE_LABEL}"}}`, r.tag], {
    encoding: 'utf8',
  }).stdout.trim() === recipeHash(r, debianSuite());
// In CI these tests never skip: the images they must see built are removed first when a run did not start from scratch.
if (process.env.CI === 'true' && !FROM_SCRATCH)
  for (const id of ['node', 'redis', 'mysql']) spawnSync('docker', ['rmi', '-f', recipe(id).tag]);
const missingAtStart = new Set(IMAGE_RECIPES.filter((r) => !current(r)).map((r) => r.id));
const allMissing = (...ids: string[]) => ids.every((id) => missingAtStart.has(id));
/** How many times Docker tagged `tag` since `since` (seconds): one per finished build. */
const taggedSince = (tag: string, since: number) =>
  docker(
    'events',
    '--since',
    String(since),
    '--until',
    String(Math.ceil(Date.now() / 1000)),
    '--filter',
    'type=image',
    '--filter',
    'event=tag',
    '--format',
    '{{.Actor.Attributes.name}}',
  )
    .split('\n')
    .filter((name) => name === tag).length;

/** SIGKILL to a process's descendants (the build's mmdebstrap and its children), deepest first. */
function killTree(pid: number): void {
  const children = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number);
  for (const child of children) killTree(child);
  for (const child of children) spawnSync('kill', ['-9', String(child)]);
}

describe('images built on first use (real Docker, Debian packages)', () => {
  let h: Harness;
  const work = mkdtempSync(join(tmpdir(), 'emu-first-use-'));
  let nodeArchive = '';
  let pythonArchive = '';
  let rubyArchive = '';
  /** A small app of one language, answering GET / with its runtime's version, as a .tar.gz. */
  const appArchive = async (name: string, files: Record<string, string>) => {
    mkdirSync(join(work, name), { recursive: true });
    for (const [file, text] of Object.entries(files)) writeFileSync(join(work, name, file), text);
    const out = join(work, `${name}.tar.gz`);
    await tarCreate({ gzip: true, file: out, cwd: work }, [name]);
    return out;
  };
  const apps: string[] = [];

  const createApp = async (name: string) => {
    expect((await h.call('POST', '/v1/apps', { body: { app: { name } } })).status).toBe(201);
    apps.push(name);
  };
  const deploy = async (app: string, archive: string) => {
    const r = await h.call('POST', `/v1/apps/${app}/deployments`, { body: { deployment: { source_url: archive } } });
    expect(r.status, r.text).toBe(201);
    const d = await waitForDeployment(
      h,
      app,
      (x) =>
        x.id === r.body.deployment.id &&
        ['success', 'build-error', 'crashed-error', 'timeout-error'].includes(x.status),
      BUILD,
    );
    return {
      status: d.status as string,
      output: (await h.call('GET', `/v1/apps/${app}/deployments/${d.id}/output`)).text,
    };
  };
  const addAddon = async (app: string, provider: string, plan: string) => {
    const r = await h.call('POST', `/v1/apps/${app}/addons`, {
      body: { addon: { addon_provider_id: provider, plan_id: plan } },
    });
    expect(r.status, r.text).toBe(201);
    return r.body.addon.id as string;
  };
  const addon = async (app: string, id: string) => (await h.call('GET', `/v1/apps/${app}/addons/${id}`)).body.addon;
  const addonLogs = async (app: string, id: string) =>
    (await h.call('GET', `/v1/apps/${app}/addons/${id}/server/logs?n=1000`)).text;
  /** Waits for `running` (error ends the wait at once), with every status message seen meanwhile. */
  const untilRunning = async (app: string, id: string) => {
    const messages = new Set<string>();
    await waitForAddon(h.call, app, id, BUILD, (m) => messages.add(m));
    return messages;
  };

  beforeAll(async () => {
    if (FROM_SCRATCH) {
      // The precondition of the proof: nothing built before the emulator needs it.
      expect(
        [...missingAtStart].sort(),
        'SCALINGO_EMULATOR_TEST_FROM_SCRATCH=1 but emulator images are present',
      ).toEqual(IMAGE_RECIPES.map((r) => r.id).sort());
    }
    nodeArchive = await appArchive('node-app', {
      'package.json': JSON.stringify({
        name: 'first-use',
        version: '1.0.0',
        private: true,
        scripts: { start: 'node server.js' },
      }),
      'server.js':
        "require('http').createServer((q, s) => s.end('node ' + process.version)).listen(process.env.PORT);\n",
    });
    pythonArchive = await appArchive('python-app', {
      'requirements.txt': '# standard library only\n',
      'app.py': [
        'import os, sys',
        'from http.server import BaseHTTPRequestHandler, HTTPServer',
        'class H(BaseHTTPRequestHandler):',
        '    def do_GET(self):',
        "        body = ('python ' + sys.version.split()[0]).encode()",
        '        self.send_response(200); self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)',
        'HTTPServer(("0.0.0.0", int(os.environ["PORT"])), H).serve_forever()',
        '',
      ].join('\n'),
    });
    rubyArchive = await appArchive('ruby-app', {
      Gemfile: '# standard library only\n',
      'app.rb': [
        "require 'socket'",
        "server = TCPServer.new('0.0.0.0', Integer(ENV.fetch('PORT')))",
        'loop do',
        '  c = server.accept',
        '  c.readpartial(4096) rescue nil',
        '  body = "ruby #{RUBY_VERSION}"',
        '  c.write("HTTP/1.1 200 OK\\r\\nContent-Length: #{body.bytesize}\\r\\nConnection: close\\r\\n\\r\\n#{body}")',
        '  c.close',
        'end',
        '',
      ].join('\n'),
    });
    h = await startEmulator({ addons: { servers: true }, intervals: { ...FAST, bootTimeoutMs: 60_000 } });
  });
  afterAll(async () => {
    for (const app of apps) await h?.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
    const instance = h?.emu.instanceId;
    await h?.stop();
    if (instance) removeInstance(instance);
    rmSync(work, { recursive: true, force: true });
  }, BUILD);

  it.runIf(allMissing('node', 'redis'))(
    'without mmdebstrap the first need fails at once with the reason (deployment build-error, addon error); the next one builds the image',
    async () => {
      await createApp('first-node');
      const path = process.env.PATH;
      // A machine without the image tool: what a newcomer met before `npm test` installed it.
      process.env.PATH = (path ?? '')
        .split(':')
        .filter((d) => !existsSync(join(d, 'mmdebstrap')))
        .join(':');
      let failed: { status: string; output: string };
      let redis: string;
      try {
        expect(spawnSync('sh', ['-c', 'command -v mmdebstrap']).status).not.toBe(0);
        failed = await deploy('first-node', nodeArchive);
        redis = await addAddon('first-node', 'scalingo-redis', 'redis-sandbox');
        await eventually(async () => (await addon('first-node', redis)).status === 'error', {
          timeoutMs: 60_000,
          what: 'the redis addon in error',
        });
      } finally {
        process.env.PATH = path;
      }
      expect(failed.status, failed.output).toBe('build-error');
      expect(failed.output).toContain('-----> Building the Node.js stack image (first use)…');
      expect(failed.output).toContain(
        'Build failed: building the Node.js stack image (scalingo-emulator/stack-node:3) failed: mmdebstrap is not installed',
      );
      const broken = await addon('first-node', redis);
      expect(broken.status_message).toContain(
        'could not start: building the Redis server image (scalingo-emulator/addon-redis:2) failed: mmdebstrap is not installed',
      );
      expect(await addonLogs('first-node', redis)).toContain('mmdebstrap is not installed');
      expect(current(recipe('node')) || current(recipe('redis'))).toBe(false);

      // The next deployment builds the stack; an action on the addon (a plan change) provisions it again.
      const ok = await deploy('first-node', nodeArchive);
      expect(ok.status, ok.output).toBe('success');
      expect(ok.output).toContain('-----> Building the Node.js stack image (first use)…');
      expect(ok.output).toMatch(/stack-node:3 built in \d+ s/);
      const upgraded = await h.call('PATCH', `/v1/apps/first-node/addons/${redis}`, {
        body: { addon: { plan_id: 'redis-starter-256' } },
      });
      expect(upgraded.status, upgraded.text).toBe(200);
      expect(upgraded.body.addon.status).toBe('provisioning');
      const seen = await untilRunning('first-node', redis);
      expect([...seen].join('\n')).toContain('building the Redis server image (first use)');
      expect(await addonLogs('first-node', redis)).toContain('[image] importing the root filesystem into Docker');
      // Observed in Docker: both images carry their recipe, the server runs.
      expect(current(recipe('node')) && current(recipe('redis'))).toBe(true);
      expect(dockerPs([`${LABELS.addonId}=${redis}`])[0]?.state).toBe('running');
    },
    2 * BUILD,
  );

  it.runIf(allMissing('mysql'))(
    'an emulator killed (with the build it runs) during an image build leaves no image and no mount; at its next start the addon builds it and runs',
    async () => {
      const dataDir = join(work, 'killed-build');
      mkdirSync(dataDir);
      const config = { intervals: FAST, addons: { servers: true }, logLevel: 'error' };
      let emu: EmulatorProcess = await spawnEmulator(dataDir, config);
      let instance = '';
      const app = 'first-killed-build';
      try {
        expect((await emu.call('POST', '/v1/apps', { body: { app: { name: app } } })).status).toBe(201);
        const add = await emu.call('POST', `/v1/apps/${app}/addons`, {
          body: { addon: { addon_provider_id: 'scalingo-mysql', plan_id: 'mysql-sandbox' } },
        });
        expect(add.status, add.text).toBe(201);
        const id = add.body.addon.id as string;
        const first = emu;
        // Killed once mmdebstrap installs packages in its chroot (/dev, /proc and /sys mounted there).
        await eventually(
          async () =>
            (await first.call('GET', `/v1/apps/${app}/addons/${id}/server/logs?n=1000`)).text.includes('I: installing'),
          {
            timeoutMs: BUILD,
            intervalMs: 100,
            what: 'the MySQL image build to be under way',
          },
        );
        instance = docker(
          'network',
          'ls',
          '--filter',
          `label=${LABELS.appId}=${add.body.addon.app_id}`,
          '--format',
          `{{.Label "${LABELS.owner}"}}`,
        );
        const buildDir = `scalingo-emu-rootfs-mysql-${first.pid}-`;
        killTree(first.pid);
        await first.kill9();
        expect(current(recipe('mysql'))).toBe(false);
        expect(
          spawnSync('docker', ['image', 'inspect', recipe('mysql').tag]).status,
          'no image may pass for built',
        ).not.toBe(0);

        emu = await spawnEmulator(dataDir, config);
        await waitForAddon(emu.call, app, id, BUILD);
        expect(current(recipe('mysql'))).toBe(true);
        expect(dockerPs([`${LABELS.addonId}=${id}`]).map((c) => c.state)).toEqual(['running']);
        // What the killed build left (its root filesystem, mmdebstrap's chroot and its mounts) is gone.
        expect(readdirSync(tmpdir()).filter((n) => n.startsWith(buildDir))).toEqual([]);
        expect(readFileSync('/proc/self/mounts', 'utf8')).not.toContain(buildDir);
      } finally {
        await emu.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
        await emu.stop();
        if (instance) removeInstance(instance);
      }
    },
    2 * BUILD,
  );

  it(
    'a deployment of each language and an addon of each kind find or build their image; two needs of one image share one build',
    async () => {
      const since = Math.floor(Date.now() / 1000) - 1;
      const missing = new Set(IMAGE_RECIPES.filter((r) => !current(r)).map((r) => r.id));
      for (const app of ['first-python', 'first-ruby', 'first-db', 'first-db-two']) await createApp(app);
      if (!apps.includes('first-node')) await createApp('first-node');
      // Everything at once: the builds the emulator needs run side by side, one per image.
      const [pg1, pg2, mysql] = [
        await addAddon('first-db', 'scalingo-postgresql', 'postgresql-sandbox'),
        await addAddon('first-db-two', 'scalingo-postgresql', 'postgresql-sandbox'),
        await addAddon('first-db', 'scalingo-mysql', 'mysql-sandbox'),
      ];
      const [deployments, messages] = await Promise.all([
        Promise.all([
          deploy('first-python', pythonArchive),
          deploy('first-ruby', rubyArchive),
          deploy('first-node', nodeArchive),
        ]),
        Promise.all([
          untilRunning('first-db', pg1),
          untilRunning('first-db-two', pg2),
          untilRunning('first-db', mysql),
        ]),
      ]);
      const [py, rb, nd] = deployments;
      for (const d of deployments) expect(d.status, d.output).toBe('success');
      // Each answers through the router, from its stack's runtime.
      for (const [app, runtime] of [
        ['first-python', /^python 3\./],
        ['first-ruby', /^ruby 3\./],
        ['first-node', /^node v\d+/],
      ] as const) {
        expect((await routerGet(h.emu.urls.routerPort, app)).body, app).toMatch(runtime);
      }
      const built = (id: string, title: string, output: string) => {
        if (missing.has(id)) expect(output).toContain(`-----> Building the ${title} image (first use)…`);
        else expect(output).not.toContain('(first use)');
      };
      built('python', 'Python stack', py.output);
      built('ruby', 'Ruby stack', rb.output);
      expect(nd.output).not.toContain('(first use)'); // built by the test above, or before the run
      if (missing.has('postgresql')) {
        for (const m of [messages[0], messages[1]])
          expect([...m].join('\n')).toContain('building the PostgreSQL server image (first use)');
        expect(await addonLogs('first-db-two', pg2)).toContain('[image] importing the root filesystem into Docker');
      }
      if (missing.has('mysql'))
        expect([...messages[2]].join('\n')).toContain('building the MySQL (MariaDB) server image (first use)');
      // Observed in Docker: each image carries its recipe, and each was tagged once however many waited for it.
      for (const id of ['python', 'ruby', 'postgresql', 'mysql']) {
        expect(current(recipe(id)), id).toBe(true);
        expect(taggedSince(recipe(id).tag, since), `builds of ${id}`).toBe(missing.has(id) ? 1 : 0);
      }
      for (const id of [pg1, pg2, mysql]) expect(dockerPs([`${LABELS.addonId}=${id}`])[0]?.state, id).toBe('running');
    },
    2 * BUILD,
  );
});
