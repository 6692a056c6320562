import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { archiveOf, copyFixture, FAST, routerGet, waitForAddon, waitForDeployment } from '../support/apps.ts';
import { launchChromium, screenshotPath } from '../support/browser.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// The dashboard as the local console (issue 41), in headless Chromium against real containers and a
// real PostgreSQL server: an addon's URL copied and used by psql on this machine, backups made and
// restored, variables applied by a restart seen in Docker, an old deployment's output, a shell in a
// one-off through the web terminal, and a router setting switched. Screenshots: screenshotPath (the README's
// pictures with UPDATE_SCREENSHOTS=1).
const APP = 'dash-console';
const LONG = 900_000;

let h: Harness;
let dir: string;
let archive: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;

const open = async (tab: string) => {
  await page.goto(`${h.api}/_emulator/?token=${h.emu.adminToken}#/apps/${APP}/${tab}`);
  await page.locator(`#tab-${tab}`).waitFor();
};
const shot = (name: string) => page.screenshot({ path: screenshotPath(`dashboard-${name}.png`) });
const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
const psql = (url: string, sql: string) => execFileSync('psql', [url, '-tAc', sql], { encoding: 'utf8' }).trim();
const ofApp = (type: string) => [
  `${LABELS.instance}=${h.emu.instanceId}`,
  `${LABELS.appName}=${APP}`,
  `${LABELS.type}=${type}`,
];
const webIds = () => dockerPs(ofApp('web')).map((c) => c.id);
const envOf = (id: string) => JSON.parse(docker('inspect', '-f', '{{json .Config.Env}}', id)) as string[];
/** Waits for the restart the page asked for: every web container replaced by a running one. */
const replaced = (before: string[]) =>
  eventually(
    () => {
      const ids = webIds();
      return ids.length > 0 && ids.every((id) => !before.includes(id)) ? ids : null;
    },
    { timeoutMs: 90_000, what: 'the web containers to be replaced' },
  );

beforeAll(async () => {
  dir = copyFixture('busybox-web');
  archive = await archiveOf('busybox-web');
  h = await startEmulator({
    intervals: { ...FAST, bootTimeoutMs: 60_000 },
    apps: [{ name: APP, dir, owner: 'dev' }],
    addons: { servers: true },
  });
  await waitForDeployment(h, APP, (d) => d.status === 'success', 120_000);
  const add = await h.call('POST', `/v1/apps/${APP}/addons`, {
    body: { addon: { addon_provider_id: 'scalingo-postgresql', plan_id: 'postgresql-sandbox' } },
  });
  expect(add.status).toBe(201);
  await waitForAddon(h.call, APP, add.body.addon.id, 600_000);
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1200, height: 820 } });
  // The page copies with the clipboard API; the test reads what it copied.
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.api });
  page = await context.newPage();
}, LONG);

afterAll(async () => {
  await browser?.close();
  await h?.stop();
  if (h) removeInstance(h.emu.instanceId);
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (archive) rmSync(dirname(archive), { recursive: true, force: true });
});

describe('the dashboard as the local console (real Docker, real PostgreSQL, Chromium)', () => {
  it(
    "copies the addon's URL (masked on the page) and psql on this machine connects with it, as with the command line",
    async () => {
      await open('addons');
      await page.locator('#addon-url-postgresql-copy').waitFor({ timeout: 60_000 });
      await page.click('#addon-url-postgresql-copy');
      const url = await clipboard();
      const u = new URL(url);
      expect(u.hostname).toBe('127.0.0.1');
      expect(u.password.length).toBeGreaterThan(8);
      expect(await page.locator('#addon-url-postgresql').textContent()).not.toContain(u.password);
      expect(psql(url, 'select 41 + 1')).toBe('42');
      // The shell line, pasted into a shell as a user would.
      await page.click('#addon-command-postgresql-copy');
      const command = await clipboard();
      expect(command).toBe(`psql '${url}'`);
      expect(execFileSync('sh', ['-c', `${command} -tAc 'select 6 * 7'`], { encoding: 'utf8' }).trim()).toBe('42');
      await page.locator('#addon-logs-postgresql', { hasText: 'ready to accept connections' }).waitFor();
      await shot('addons');
    },
    LONG,
  );

  it(
    'makes a backup and restores it: the rows written after it are gone (psql)',
    async () => {
      await page.click('#addon-url-postgresql-copy');
      const url = await clipboard();
      psql(url, 'create table visits (n int); insert into visits values (1)');
      await page.click('#backup-postgresql');
      const restore = page.locator('#backups-postgresql [data-restore]').first();
      await restore.waitFor({ timeout: 120_000 });
      psql(url, 'insert into visits values (2)');
      expect(psql(url, 'select count(*) from visits')).toBe('2');
      page.once('dialog', (d) => void d.accept());
      await restore.click();
      await page.locator('#addons-message', { hasText: /Restore of \S+: done/ }).waitFor({ timeout: 180_000 });
      expect(psql(url, "select string_agg(n::text, ',') from visits")).toBe('1');
    },
    LONG,
  );

  it(
    'asks before changing the plan: a refusal changes nothing, an acceptance changes it',
    async () => {
      const before = (await h.call('GET', `/v1/apps/${APP}/addons`)).body.addons[0].plan.id;
      let asked = '';
      page.once('dialog', (d) => ((asked = d.message()), void d.dismiss()));
      await page.selectOption('#plan-postgresql', { index: 1 });
      await page.click('#change-plan-postgresql');
      await eventually(() => asked, { what: 'the confirmation' });
      expect(asked).toMatch(/^Change the plan of/);
      expect((await h.call('GET', `/v1/apps/${APP}/addons`)).body.addons[0].plan.id).toBe(before);
      // Accepted: the API has the plan picked.
      const chosen = await page.locator('#plan-postgresql').inputValue();
      expect(chosen).not.toBe(before);
      page.once('dialog', (d) => void d.accept());
      await page.click('#change-plan-postgresql');
      await page.locator('#addons-message', { hasText: `plan changed to ${chosen}` }).waitFor();
      const addon = (await h.call('GET', `/v1/apps/${APP}/addons`)).body.addons[0];
      expect(addon.plan.id).toBe(chosen);
      await waitForAddon(h.call, APP, addon.id, 300_000);
    },
    LONG,
  );

  it(
    'adds and edits a variable, shows the API error of a bad name, and the restart it asks for puts it in the containers; deleting takes it out',
    async () => {
      await open('environment');
      await page.locator('#variables tr[data-variable="SCALINGO_POSTGRESQL_URL"]').waitFor();
      expect(await page.locator('#env-value-SCALINGO_POSTGRESQL_URL').textContent()).toBe('••••••••');
      await page.fill('#env-name', '1 bad name');
      await page.fill('#env-value', 'x');
      await page.click('#env-add-button');
      await page.locator('#env-message.error', { hasText: '422: name should contain only letters' }).waitFor();

      await page.fill('#env-name', 'DASH_GREETING');
      await page.fill('#env-value', 'hello-from-the-dashboard');
      await page.click('#env-add-button');
      await page.locator('#variables tr[data-variable="DASH_GREETING"]').waitFor();
      await shot('environment');
      await page.click('[data-edit="DASH_GREETING"]');
      await page.fill('[data-editing="DASH_GREETING"]', 'hello-edited-in-the-dashboard');
      await page.press('[data-editing="DASH_GREETING"]', 'Enter');
      await page.locator('#env-value-DASH_GREETING', { hasText: 'hello-edited-in-the-dashboard' }).waitFor();
      await page.locator('#env-pending', { hasText: '2 changes not applied yet' }).waitFor();
      let before = webIds();
      await page.click('#env-apply');
      await page
        .locator('#env-message', { hasText: 'Restart to apply the environment: done' })
        .waitFor({ timeout: 90_000 });
      let after = await replaced(before);
      expect(envOf(after[0])).toContain('DASH_GREETING=hello-edited-in-the-dashboard');

      page.once('dialog', (d) => void d.accept());
      await page.click('[data-delete="DASH_GREETING"]');
      await page.locator('#variables tr[data-variable="DASH_GREETING"]').waitFor({ state: 'detached' });
      before = after;
      await page.click('#env-apply');
      await page
        .locator('#env-message', { hasText: 'Restart to apply the environment: done' })
        .waitFor({ timeout: 90_000 });
      after = await replaced(before);
      expect(envOf(after[0]).some((e) => e.startsWith('DASH_GREETING='))).toBe(false);
    },
    LONG,
  );

  it(
    "opens an old deployment's output",
    async () => {
      for (let i = 0; i < 2; i++) {
        const d = await h.call('POST', `/v1/apps/${APP}/deployments`, {
          body: { deployment: { source_url: archive } },
        });
        expect(d.status).toBe(201);
        await waitForDeployment(h, APP, (x) => x.id === d.body.deployment.id && x.status === 'success', 120_000);
      }
      const all = (await h.call('GET', `/v1/apps/${APP}/deployments`)).body.deployments as { id: string }[];
      expect(all.length).toBe(3);
      const oldest = all[all.length - 1].id;
      await open('deployments');
      await page.click(`#deployments tr[data-deployment="${oldest}"]`);
      await page.locator('#output-state', { hasText: 'success' }).waitFor();
      const expected = (await h.call('GET', `/v1/apps/${APP}/deployments/${oldest}/output`)).text;
      expect(expected).toContain('Application deployed');
      expect(await page.locator('#deployment-output').textContent()).toBe(expected);
      await shot('deployments');
    },
    LONG,
  );

  it(
    "follows a running deployment's output live (deployments stream) until it ends",
    async () => {
      // A postdeploy hook that waits for the test twice: the deployment runs until the test lets it go.
      const slow = copyFixture('busybox-web');
      const procfile = readFileSync(join(slow, 'Procfile'), 'utf8');
      const wait = (file: string) => `until [ -f /app/${file} ]; do sleep 0.2; done`;
      writeFileSync(
        join(slow, 'Procfile'),
        `${procfile}postdeploy: echo waiting-for-the-test; ${wait('go')}; echo released-by-the-test; ${wait('end')}\n`,
      );
      const slowArchive = await archiveOf('busybox-web', slow);
      let hook: { id: string } | undefined;
      const release = (file: string) => hook && docker('exec', hook.id, 'touch', `/app/${file}`);
      try {
        const d = await h.call('POST', `/v1/apps/${APP}/deployments`, {
          body: { deployment: { source_url: slowArchive } },
        });
        expect(d.status).toBe(201);
        const id = d.body.deployment.id as string;
        hook = await eventually(
          () =>
            dockerPs([
              `${LABELS.owner}=${h.emu.instanceId}`,
              `${LABELS.appName}=${APP}`,
              `${LABELS.type}=postdeploy`,
            ])[0],
          { timeoutMs: 120_000, what: 'the postdeploy hook running' },
        );
        await open('deployments');
        await page.click(`#deployments tr[data-deployment="${id}"]`);
        await page.locator('#output-state', { hasText: 'live' }).waitFor();
        release('go');
        // Said while the deployment still runs (the hook waits again): the page reads the output once
        // when it is picked, and again only when it has ended, so this line came through the stream.
        await page.locator('#deployment-output', { hasText: 'released-by-the-test' }).waitFor({ timeout: 60_000 });
        expect(await page.locator('#output-state').textContent()).toBe('live');
        release('end');
        await page.locator('#output-state', { hasText: 'success' }).waitFor({ timeout: 60_000 });
        // Then the whole output, the lines said before the page connected included.
        await page.locator('#deployment-output', { hasText: 'waiting-for-the-test' }).waitFor();
      } finally {
        // Whatever failed above, the hook must end (or the emulator's stop waits for the deployment).
        for (const file of ['go', 'end'])
          try {
            release(file);
          } catch {
            // the hook has ended already
          }
        rmSync(slow, { recursive: true, force: true });
        rmSync(dirname(slowArchive), { recursive: true, force: true });
      }
    },
    LONG,
  );

  it(
    'runs a shell in a one-off from the web terminal: resized, its output and its exit code; closing the tab stops it',
    async () => {
      await open('terminal');
      await page.fill('#terminal-command', 'sh');
      await page.click('#terminal-run');
      await page.locator('#terminal-state', { hasText: 'attached' }).waitFor({ timeout: 60_000 });
      // The one-off starts once the terminal is attached.
      await eventually(
        () =>
          dockerPs(ofApp('one-off'))
            .map((c) => c.state)
            .join() === 'running',
        {
          timeoutMs: 30_000,
          what: 'the one-off running',
        },
      );
      await page.setViewportSize({ width: 1000, height: 760 });
      const size = await eventually(async () => {
        const s = await page.locator('#terminal').getAttribute('data-size');
        return s && s !== 'undefined' ? s : null;
      });
      await page.click('#terminal');
      await page.keyboard.type('stty size; echo hello && exit 3');
      await page.keyboard.press('Enter');
      await page.locator('#terminal-state[data-exit-code="3"]').waitFor({ timeout: 30_000 });
      const screen = (await page.locator('#terminal .xterm-rows').innerText()).replace(/\u00a0/g, ' ');
      const lines = screen.split('\n').map((l) => l.trim());
      expect(lines).toContain('hello');
      expect(lines).toContain(await page.locator('#terminal').getAttribute('data-size'));
      expect(size).toMatch(/^\d+ \d+$/);
      await shot('terminal');
      await eventually(() => dockerPs(ofApp('one-off')).length === 0, { timeoutMs: 30_000, what: 'the one-off gone' });

      // A second shell, and the tab closed while it runs.
      await page.click('#terminal-run');
      await page.locator('#terminal-state', { hasText: 'attached' }).waitFor({ timeout: 60_000 });
      await eventually(() => dockerPs(ofApp('one-off')).length === 1, {
        timeoutMs: 30_000,
        what: 'the second one-off',
      });
      await page.close();
      await eventually(() => dockerPs(ofApp('one-off')).length === 0, {
        timeoutMs: 60_000,
        what: 'the one-off stopped',
      });
      page = await context.newPage();
    },
    LONG,
  );

  it('switches force HTTPS (the API says so, the router redirects to https) and lists domains and collaborators', async () => {
    await open('settings');
    const force = page.locator('#setting-force_https');
    await eventually(async () => !(await force.isChecked()) && !(await force.isDisabled()));
    expect((await routerGet(h.emu.urls.routerPort, APP)).status).toBe(200);
    await force.click();
    await page.locator('#settings-message', { hasText: 'force https: on' }).waitFor();
    expect((await h.call('GET', `/v1/apps/${APP}`)).body.app.force_https).toBe(true);
    const res = await routerGet(h.emu.urls.routerPort, APP);
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe(`https://${APP}.localhost/`);
    // The other two switches, one turned back off.
    await page.click('#setting-sticky_session');
    await page.locator('#settings-message', { hasText: 'sticky session: on' }).waitFor();
    await page.click('#setting-router_logs');
    await page.locator('#settings-message', { hasText: 'router logs: on' }).waitFor();
    await page.click('#setting-router_logs');
    await page.locator('#settings-message', { hasText: 'router logs: off' }).waitFor();
    const settings = (await h.call('GET', `/v1/apps/${APP}`)).body.app;
    expect([settings.force_https, settings.sticky_session, settings.router_logs]).toEqual([true, true, false]);
    // The read views: what the API lists.
    const domain = await h.call('POST', `/v1/apps/${APP}/domains`, { body: { domain: { name: 'shop.localhost' } } });
    expect(domain.status).toBe(201);
    const invited = await h.call('POST', `/v1/apps/${APP}/collaborators`, {
      body: { collaborator: { email: 'other@example.test' } },
    });
    expect(invited.status).toBe(201);
    await page.locator('#domains td', { hasText: 'shop.localhost' }).waitFor();
    await page.locator('#collaborators td', { hasText: 'other@example.test' }).waitFor();
    await page.locator('p.muted', { hasText: /^No cron task \(cron\.json/ }).waitFor();
    await page.locator('p.muted', { hasText: /^No autoscaler\.$/ }).waitFor();
    await shot('settings');
  });

  it(
    'removes the addon after asking: its server container is gone',
    async () => {
      await open('addons');
      const id = (await h.call('GET', `/v1/apps/${APP}/addons`)).body.addons[0].id as string;
      // A stand-in (no server in the emulator) says so instead of a connection.
      const standIn = await h.call('POST', `/v1/apps/${APP}/addons`, {
        body: { addon: { addon_provider_id: 'scalingo-mongodb', plan_id: 'mongo-sandbox' } },
      });
      expect(standIn.status).toBe(201);
      await page.locator('#connection-mongodb', { hasText: 'A stand-in: no database server runs' }).waitFor();
      expect(dockerPs([`${LABELS.addonId}=${id}`])).toHaveLength(1);
      page.once('dialog', (d) => void d.accept());
      await page.click('#remove-postgresql');
      await page.locator('[data-addon="postgresql"]').waitFor({ state: 'detached', timeout: 30_000 });
      expect((await h.call('GET', `/v1/apps/${APP}/addons`)).body.addons.map((a: any) => a.id)).toEqual([
        standIn.body.addon.id,
      ]);
      await eventually(() => dockerPs([`${LABELS.addonId}=${id}`]).length === 0, {
        timeoutMs: 60_000,
        what: 'the server gone',
      });
    },
    LONG,
  );
});
