import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';
import { archiveOf, copyFixture, FAST, routerGet, waitForDeployment, waitForStatus } from '../support/apps.ts';
import { removeInstance } from '../support/docker-cli.ts';

// A directory bound in the config, at the emulator's start: up to date when no file changed since its
// running version (the newest successful deployment) was deployed. A deployment that failed after it
// sets the app's last_deployed_at too, and must not make a change made before the failure look deployed.
const APP = 'bound-restart';
const ENDED = ['success', 'build-error', 'crashed-error', 'timeout-error', 'aborted'];

describe('a bound directory changed while the emulator was stopped (real Docker)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'emu-bound-restart-'));
  const dir = copyFixture('busybox-web');
  const made: string[] = [dataDir, dir];
  const instances = new Set<string>();
  let h: Harness | undefined;
  const config = { inMemory: false, dataDir, intervals: FAST, apps: [{ name: APP, dir }] };
  afterAll(async () => {
    await h?.stop();
    for (const i of instances) removeInstance(i);
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });

  it('is deployed at start when it changed after the running version, even though a later deployment failed', async () => {
    h = await startEmulator(config);
    instances.add(h.emu.instanceId);
    const ok = await waitForDeployment(h, APP);
    expect(ok.status).toBe('success');

    // A deployment that fails after it (its web process exits at once), from an archive.
    const crashing = copyFixture('busybox-web');
    made.push(crashing);
    writeFileSync(join(crashing, 'Procfile'), 'web: exit 3\n');
    const archive = await archiveOf('crashing', crashing);
    made.push(dirname(archive));
    const res = await h.call('POST', `/v1/apps/${APP}/deployments`, { body: { deployment: { source_url: archive } } });
    expect(res.status).toBe(201);
    const failed = await waitForDeployment(h, APP, (d) => d.id === res.body.deployment.id && ENDED.includes(d.status));
    expect(failed.status).toBe('crashed-error');
    const app = (await h.call('GET', `/v1/apps/${APP}`)).body.app;
    await h.stop();
    h = undefined;

    // Saved while nothing watched the folder, between the running version's deployment and the failed one.
    const savedAt = (Date.parse(ok.created_at) + Date.parse(failed.created_at)) / 2;
    writeFileSync(join(dir, 'index.html'), 'version 2 from CONTAINER_NAME\n');
    utimesSync(join(dir, 'index.html'), savedAt / 1000, savedAt / 1000);
    // What made the old rule take the folder for deployed: the failure moved last_deployed_at past the save.
    expect(Date.parse(app.last_deployed_at)).toBeGreaterThan(savedAt);

    h = await startEmulator(config);
    instances.add(h.emu.instanceId);
    // The decision is taken at start: the new deployment is listed once the emulator is up.
    const after = (await h.call('GET', `/v1/apps/${APP}/deployments`)).body.deployments as { id: string }[];
    expect(after).toHaveLength(3);
    const redeployed = await waitForDeployment(
      h,
      APP,
      (d) => d.id === after[0].id && ENDED.includes(d.status),
      120_000,
    );
    expect(redeployed.status).toBe('success');
    await waitForStatus(h, APP, 'running');
    expect((await routerGet(h.emu.urls.routerPort, APP)).body).toBe('version 2 from web-1\n');
  }, 300_000);
});
