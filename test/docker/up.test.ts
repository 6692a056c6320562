import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { type UpHandle, up } from '../../src/cli/up/up.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { routerGet } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// `up` end to end on real Docker: a project with scalingo.json (env generators, a PostgreSQL addon,
// formation) and a Procfile postdeploy, observed through docker ps, the router's answers, psql in the
// server and the lines `up` prints; then a live change, a failing hook, a stop and a second `up`.
const LONG = 900_000;
const root = mkdtempSync(join(tmpdir(), 'emu-up-'));
const dir = join(root, 'Shop Front');
const dataDir = join(root, 'data');
const APP = 'shop-front';

const PROCFILE = [
  // The web page shows the variables the manifest made (busybox httpd serves /tmp/www).
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
  'web: mkdir -p /tmp/www && cp /app/index.html /tmp/www/ && echo "$GREETING|$SECRET_KEY|$ADMIN_URL|$LABEL|${DATABASE_URL%%@*}" > /tmp/www/env.txt && exec httpd -f -p $PORT -h /tmp/www',
  'worker: while true; do echo "worker $CONTAINER tick"; sleep 2; done',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
  'postdeploy: echo "postdeploy sees ${DATABASE_URL%%:*}"',
].join('\n');
const MANIFEST = {
  name: 'Shop front',
  env: {
    GREETING: { value: 'hello' },
    SECRET_KEY: { generator: 'secret', description: 'cookies' },
    ADMIN_URL: { generator: 'url', template: '%URL%/admin' },
    LABEL: { generator: 'template', template: 'app %APP%' },
    API_KEY: { required: true, description: 'the payment API key' },
  },
  addons: [{ plan: 'postgresql:postgresql-sandbox', options: { version: '15' } }],
  formation: { web: { amount: 1, size: 'S' }, worker: { amount: 1, size: 'S' } },
};

function writeProject(html: string, procfile = PROCFILE) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'Procfile'), `${procfile}\n`);
  writeFileSync(join(dir, 'index.html'), html);
  writeFileSync(join(dir, 'scalingo.json'), JSON.stringify(MANIFEST, null, 2));
  writeFileSync(join(dir, '.gitignore'), 'tmp/\n*.log\n');
  writeFileSync(join(dir, 'cron.json'), JSON.stringify({ jobs: [{ command: '0 3 * * * echo nightly', size: 'S' }] }));
}

function capture() {
  const out = new PassThrough();
  let text = '';
  out.on('data', (c) => (text += c));
  return { out, text: () => text };
}

const get = (h: UpHandle, path: string) => routerGet(Number(new URL(h.url).port), h.app, path);

const appContainers = () => dockerPs([`${LABELS.appName}=${APP}`]).filter((c) => c.state === 'running');
const opts = () => ({
  dir,
  dataDir,
  port: 0,
  routerPort: 0,
  sshPort: 0,
  env: { API_KEY: 'key-from-shell' },
  debounceMs: 200,
  configFile: undefined,
});

describe('scalingo-emulator up (real Docker)', () => {
  let h: UpHandle | undefined;
  let instance = '';
  let secret = '';
  let pgContainer = '';
  let pgDb = '';
  const printed = capture();

  afterAll(async () => {
    await h?.stop().catch(() => undefined);
    if (instance) removeInstance(instance);
    rmSync(root, { recursive: true, force: true });
  }, LONG);

  it(
    'creates the app, its addon and variables from scalingo.json, deploys, applies the formation and prints prefixed lines',
    async () => {
      writeProject('<h1>version 1</h1>\n');
      mkdirSync(join(dir, 'tmp'));
      writeFileSync(join(dir, 'tmp', 'ignored.txt'), 'not deployed');
      h = await up({ ...opts(), out: printed.out, color: false });
      instance = h.emulator?.instanceId ?? '';
      expect(h.app).toBe(APP);
      expect(h.firstDeployment?.status).toBe('success');
      // Formation: one web and one worker, as real containers.
      const types = () =>
        appContainers()
          .map((c) => docker('inspect', '-f', `{{index .Config.Labels "${LABELS.type}"}}`, c.id).trim())
          .sort()
          .join(',');
      await eventually(() => types() === 'web,worker', {
        timeoutMs: 60_000,
        what: 'web-1 and worker-1 running (and nothing else)',
      });
      expect(docker('inspect', '-f', '{{.HostConfig.Memory}}', appContainers()[0].id).trim()).toBe(
        String(256 * 1024 * 1024),
      );
      // The router answers with the page and the variables the manifest made.
      expect((await get(h, '/index.html')).body).toContain('version 1');
      const env = (await get(h, '/env.txt')).body.trim().split('|');
      expect(env[0]).toBe('hello');
      expect(env[1]).toMatch(/^[0-9a-f]{64}$/);
      expect(env[2]).toBe(`${h.url}/admin`);
      expect(env[3]).toBe(`app ${APP}`);
      expect(env[4]).toMatch(/^postgres:\/\//);
      secret = env[1];
      // The addon is a real PostgreSQL server, reachable from the host at the printed 127.0.0.1 port.
      const pg = h.addons.find((a) => a.kind === 'postgresql');
      expect(pg?.host).toBe('127.0.0.1');
      pgContainer = dockerPs([`${LABELS.addonId}=${pg?.addonId}`])[0].id;
      expect(docker('port', pgContainer, '5432')).toBe(`127.0.0.1:${pg?.port}`);
      pgDb = new URL(String(pg?.url)).pathname.slice(1);
      docker(
        'exec',
        '-u',
        'postgres',
        pgContainer,
        'psql',
        '-d',
        pgDb,
        '-c',
        'CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$before stop$$)',
      );
      // What the terminal shows: build lines, the postdeploy's output, the worker's lines, URL, addon, CLI variables.
      await eventually(() => /^worker-1\s+\| worker worker-1 tick$/m.test(printed.text()), {
        timeoutMs: 30_000,
        what: 'a worker-1 line',
      });
      const text = printed.text();
      expect(text).toMatch(/^build\s+\| -----> Running the postdeploy hook: echo/m);
      // Once: the hook's lines reach the logs from the hook, not also from the logs collector (the image's labels).
      expect(text.match(/^postdeploy\s+\| postdeploy sees postgres$/gm)).toHaveLength(1);
      expect(text).toContain(`App         ${h.url}`);
      expect(text).toContain(`postgresql  ${pg?.url}`);
      expect(text).toMatch(/export SCALINGO_API_URL=http:\/\/127\.0\.0\.1:\d+ SCALINGO_AUTH_URL=/);
      expect(text).not.toContain('\u001b[');
      // The route `up` reads the address from: its answer, and its failure paths.
      const call = async (method: string, path: string, token: string | null = h?.token ?? '', body?: unknown) => {
        const res = await fetch(`${h?.apiUrl}${path}`, {
          method,
          headers: {
            ...(token === null ? {} : { authorization: `Basic ${Buffer.from(`:${token}`).toString('base64')}` }),
            'content-type': 'application/json',
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: await res.json().catch(() => null) };
      };
      const server = await call('GET', `/v1/apps/${APP}/addons/${pg?.addonId}/server`);
      expect(server).toEqual({
        status: 200,
        body: { server: { kind: 'postgresql', running: true, host: '127.0.0.1', port: pg?.port } },
      });
      expect((await call('GET', `/v1/apps/${APP}/addons/${pg?.addonId}/server`, null)).status).toBe(401);
      expect((await call('GET', `/v1/apps/${APP}/addons/${pg?.addonId}/server`, 'tk-us-not-a-token')).status).toBe(401);
      const unknownAddon = await call('GET', `/v1/apps/${APP}/addons/ad-0000/server`);
      expect(unknownAddon.status).toBe(404);
      expect(unknownAddon.body.resource).toBe('addon');
      expect((await call('GET', '/v1/apps/no-such-app/addons/ad-0000/server')).status).toBe(404);
      const mongo = await call('POST', `/v1/apps/${APP}/addons`, h?.token, {
        addon: { addon_provider_id: 'scalingo-mongodb', plan_id: 'mongo-sandbox' },
      });
      const standIn = await call('GET', `/v1/apps/${APP}/addons/${mongo.body.addon.id}/server`);
      expect(standIn.status).toBe(400);
      expect(standIn.body.error).toContain('stand-in');
      expect((await call('DELETE', `/v1/apps/${APP}/addons/${mongo.body.addon.id}`)).status).toBe(204);
      // cron.json of the folder is the Scheduler's, as on the platform.
      const cron = await call('GET', `/v1/apps/${APP}/cron_tasks`);
      expect(cron.status).toBe(200);
      expect(JSON.stringify(cron.body)).toContain('echo nightly');
      // .gitignore'd files are not deployed.
      expect((await get(h, '/tmp/ignored.txt')).status).not.toBe(200);
    },
    LONG,
  );

  it(
    'the dashboard at the printed address shows the up app like any other (headless Chromium)',
    async () => {
      const address = /^ {2}Dashboard {3}(\S+)$/m.exec(printed.text())?.[1];
      expect(address, printed.text()).toMatch(/\/_emulator\/\?token=ad-/);
      const browser = await chromium.launch({
        executablePath: '/usr/bin/chromium',
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
        await page.goto(String(address));
        await page.locator(`tr[data-app="${APP}"] [data-status="running"]`).waitFor({ timeout: 30_000 });
        await page.click(`tr[data-app="${APP}"] a`);
        await page.locator('tr[data-container="web-1"] [data-status="running"]').waitFor({ timeout: 30_000 });
        await page.locator('tr[data-container="worker-1"] [data-status="running"]').waitFor({ timeout: 30_000 });
        await page.click('#deployments tr[data-deployment]');
        await page
          .locator('#deployment-output', { hasText: 'Running the postdeploy hook' })
          .waitFor({ timeout: 30_000 });
      } finally {
        await browser.close();
      }
    },
    LONG,
  );

  it(
    'redeploys a change of the folder; a failing postdeploy leaves the running version up and says why',
    async () => {
      const before = h?.deployments.length ?? 0;
      writeFileSync(join(dir, 'index.html'), '<h1>version 2</h1>\n');
      await eventually(async () => h && (await get(h, '/index.html')).body.includes('version 2'), {
        timeoutMs: 120_000,
        what: 'version 2 served',
      });
      await eventually(() => h?.deployments.slice(before).some((d) => d.status === 'success'), {
        timeoutMs: 30_000,
        what: 'the redeployment recorded',
      });
      // An ignored path changes nothing.
      const count = h?.deployments.length ?? 0;
      writeFileSync(join(dir, 'tmp', 'other.log'), 'x');
      await new Promise((ok) => setTimeout(ok, 1500));
      expect(h?.deployments.length).toBe(count);

      writeProject(
        '<h1>version 3</h1>\n',
        PROCFILE.replace(/postdeploy: .*/, 'postdeploy: echo "migration failed"; exit 3'),
      );
      await eventually(() => h?.deployments.some((d) => d.status === 'hook-error'), {
        timeoutMs: 120_000,
        what: 'a hook-error deployment',
      });
      expect((await get(h as UpHandle, '/index.html')).body).toContain('version 2');
      expect(printed.text()).toMatch(/Deployment hook-error: The postdeploy hook failed \(exit code 3\)/);
      expect(printed.text().match(/^postdeploy\s+\| migration failed$/gm)).toHaveLength(1);
      // The secret is made once: redeploys keep it.
      expect((await get(h as UpHandle, '/env.txt')).body).toContain(secret);
      writeProject('<h1>version 2</h1>\n');
    },
    LONG,
  );

  it(
    'stop() stops the containers and the addon server; a second up resumes with the same data',
    async () => {
      const pgEngine = pgContainer;
      await h?.stop();
      expect(appContainers()).toEqual([]);
      expect(dockerPs([`${LABELS.appName}=${APP}`], true).filter((c) => c.state === 'running')).toEqual([]);
      expect(docker('inspect', '-f', '{{.State.Running}}', pgEngine).trim()).not.toBe('true');

      const again = capture();
      h = await up({ ...opts(), out: again.out, color: false });
      expect(again.text()).toContain(`Resuming the app ${APP}`);
      await eventually(async () => h && (await get(h, '/index.html')).status === 200, {
        timeoutMs: 120_000,
        what: 'the app served again',
      });
      expect((await get(h, '/env.txt')).body).toContain(secret);
      const pg = h.addons.find((a) => a.kind === 'postgresql');
      const container = dockerPs([`${LABELS.addonId}=${pg?.addonId}`])[0].id;
      expect(docker('exec', '-u', 'postgres', container, 'psql', '-d', pgDb, '-tAc', 'SELECT v FROM kept').trim()).toBe(
        'before stop',
      );
    },
    LONG,
  );
});
