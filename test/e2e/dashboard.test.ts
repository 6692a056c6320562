import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, waitForDeployment } from '../support/apps.ts';
import { launchChromium, screenshotPath } from '../support/browser.ts';
import { dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// The dashboard in a real headless Chromium (Debian's package, installed by scripts/docker-up.sh),
// against an emulator running real containers. Screenshots are kept in test-artifacts/; the app's
// overview is the README's (docs/dashboard.png, rewritten with UPDATE_SCREENSHOTS=1).
const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts');
const APP = 'dash-site';

let h: Harness;
let dir: string;
let browser: Browser;
let page: Page;

const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });
const webContainers = () =>
  dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.appName}=${APP}`, `${LABELS.type}=web`]);

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  dir = copyFixture('busybox-web');
  h = await startEmulator({ intervals: { ...FAST, statsSampleMs: 1000 }, apps: [{ name: APP, dir, owner: 'dev' }] });
  await waitForDeployment(h, APP, (d) => d.status === 'success');
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.stop();
  if (h) {
    removeInstance(h.emu.instanceId);
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the dashboard in a browser', () => {
  it('asks for the admin token without one, and refuses a wrong one', async () => {
    await page.goto(`${h.api}/_emulator/`);
    await page.locator('#admin-token').waitFor();
    await page.fill('#admin-token', 'ad-not-the-right-token-000000');
    await page.click('button:has-text("Open the dashboard")');
    await page.locator('text=The admin token was refused').waitFor();
  });

  it('opens from the start link, drops the token from the address bar, and lists the apps with their status', async () => {
    await page.goto(`${h.api}/_emulator/?token=${h.emu.adminToken}`);
    const row = page.locator(`tr[data-app="${APP}"]`);
    await row.waitFor();
    expect(page.url()).not.toContain('token=');
    expect(await page.evaluate(() => sessionStorage.getItem('scalingo-emulator.admin-token'))).toBe(h.emu.adminToken);
    await row.locator('[data-status="running"]').waitFor();
    // The user picker lists the configured users; the session is the first one's.
    expect(await page.locator('#user-picker option').allTextContents()).toEqual([
      'dev <dev@example.test>',
      'other <other@example.test>',
      'trial <trial@example.test>',
    ]);
    await shot('apps');
  });

  it("shows the app's containers, scales from the button, and the new container appears on the page and in Docker", async () => {
    await page.click(`tr[data-app="${APP}"] a`);
    await page.locator('tr[data-container="web-1"] [data-status="running"]').waitFor();
    expect(webContainers()).toHaveLength(1);
    await page.fill('#amount-web', '2');
    await page.click('#scale-web');
    await page.locator('tr[data-container="web-2"] [data-status="running"]').waitFor({ timeout: 60_000 });
    await page.locator('#message', { hasText: 'Scale web to 2: done' }).waitFor({ timeout: 60_000 });
    expect(webContainers().map((c) => c.state)).toEqual(['running', 'running']);
    // The events timeline and the deployment with its build output.
    await page.locator('#events li[data-event="scale"]').waitFor();
    await page.click('#deployments tr[data-deployment]');
    await page.locator('#deployment-output', { hasText: 'Application deployed' }).waitFor();
  });

  it('shows a new log line as the container prints it (logs WebSocket)', async () => {
    await page.locator('#log-state', { hasText: 'live' }).waitFor();
    const marker = `hello-from-the-test-${Date.now()}`;
    const run = await h.call('POST', `/v1/apps/${APP}/run`, { body: { command: `echo ${marker}`, detached: true } });
    expect(run.status).toBe(200);
    await page.locator('#logs', { hasText: marker }).waitFor({ timeout: 30_000 });
  });

  it('draws the metrics charts and lists alerts with their state (one firing)', async () => {
    const alert = await h.call('POST', `/v1/apps/${APP}/alerts`, {
      body: { alert: { container_type: 'web', metric: 'rpm_per_container', limit: 1000 } },
    });
    expect(alert.status).toBe(201);
    await page.locator(`#alerts tr[data-alert="${alert.body.alert.id}"] [data-status="ok"]`).waitFor();
    // Any container uses more than 0.01 % of its memory: this one fires after a second of samples.
    const firing = await h.call('POST', `/v1/apps/${APP}/alerts`, {
      body: {
        alert: { container_type: 'web', metric: 'memory', limit: 0.0001, duration_before_trigger: 1_000_000_000 },
      },
    });
    expect(firing.status).toBe(201);
    await page
      .locator(`#alerts tr[data-alert="${firing.body.alert.id}"] [data-status="firing"]`)
      .waitFor({ timeout: 30_000 });
    // Samples every second (intervals.statsSampleMs): the memory chart gets points.
    await eventually(async () => Number(await page.locator('#chart-memory').getAttribute('data-points')) > 0, {
      timeoutMs: 30_000,
      what: 'memory points',
    });
    expect(await page.locator('#chart-memory polyline').count()).toBe(1);
    await shot('app');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: screenshotPath('dashboard.png') });
  });

  it('restarts every container from the button', async () => {
    const before = webContainers()
      .map((c) => c.id)
      .sort();
    await page.click('#restart');
    await page.locator('#message', { hasText: 'Restart: done' }).waitFor({ timeout: 60_000 });
    const after = await eventually(() => {
      const ids = webContainers().map((c) => c.id);
      return ids.length === 2 && ids.every((id) => !before.includes(id)) ? ids : null;
    });
    expect(after).toHaveLength(2);
  });
});
