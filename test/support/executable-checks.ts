import { mkdirSync } from 'node:fs';
import { expect } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type EmulatorProcess, type StartCommand, spawnEmulator } from '../reliability/emulator-process.ts';
import { archiveOf, routerGet } from './apps.ts';
import { dockerPs, eventually, giveUp, instanceOfApp, removeInstance } from './docker-cli.ts';

/**
 * `start` of a built executable (this machine's, or the other architecture's under QEMU) on a SQLite file in
 * `dataDir`: the API answers, `app` (busybox-web) deploys on this machine's engine, Docker runs its web
 * container and the router serves its page. Everything it made is removed at the end.
 */
export async function expectStartDeployServe(
  command: StartCommand,
  dataDir: string,
  app: string,
  deployTimeoutMs: number,
): Promise<void> {
  mkdirSync(dataDir);
  let emu: EmulatorProcess | undefined;
  let instance = '';
  try {
    emu = await spawnEmulator(dataDir, {}, command);
    const e = emu;
    const health = await e.call('GET', '/_emulator/health', { as: null });
    expect(health.status, health.text).toBe(200);
    expect((await e.call('POST', '/v1/apps', { body: { app: { name: app } } })).status).toBe(201);
    const source_url = await archiveOf('busybox-web');
    expect((await e.call('POST', `/v1/apps/${app}/deployments`, { body: { deployment: { source_url } } })).status).toBe(
      201,
    );
    const d = await eventually(
      async () => {
        const [last] = (await e.call('GET', `/v1/apps/${app}/deployments`)).body.deployments;
        if (/error/.test(last?.status ?? '')) throw giveUp(`the deployment ended in ${last.status}`);
        return last?.status === 'success' ? last : null;
      },
      { timeoutMs: deployTimeoutMs, what: `the deployment of ${app}` },
    );
    expect(d.status).toBe('success');
    instance = instanceOfApp(app);
    const web = dockerPs([`${LABELS.appName}=${app}`, `${LABELS.type}=web`]);
    expect(web.map((c) => c.state)).toEqual(['running']);
    const routerPort = Number(/Router\s+http:\/\/<app>\.localhost:(\d+)/.exec(e.output())?.[1]);
    const page = await routerGet(routerPort, app);
    expect(page.status).toBe(200);
    expect(page.body).toBe('version 1 from web-1\n');
  } finally {
    await emu?.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
    await emu?.stop();
    if (instance) removeInstance(instance);
  }
}
