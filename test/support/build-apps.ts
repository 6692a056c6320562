import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { c as tarCreate } from 'tar';
import { afterAll, beforeAll, expect } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FAST, waitForDeployment } from './apps.ts';
import { dockerPs, removeInstance } from './docker-cli.ts';

// The set-up the build tests share (runtime versions, package managers, detection): one emulator for the
// file, apps deployed from archives of folders the test writes, and everything removed after the file.

export interface Deployed {
  d: { id: string; status: string };
  output: string;
}

export interface BuildApps {
  /** The file's emulator (started in its beforeAll). */
  readonly h: Harness;
  /**
   * A new app deployed from an archive of a folder named as the app, holding `content` (files by name) or what
   * `fill` writes in it; the app's variables `env` are set first. Resolves the finished deployment and its output.
   */
  deploy(
    app: string,
    content: Record<string, string> | ((dir: string) => void),
    env?: Record<string, string>,
  ): Promise<Deployed>;
  /** The app's archive deployed again; resolves the new deployment once finished. */
  redeploy(app: string): Promise<Deployed>;
  /** The archive the app was deployed from. */
  archive(app: string): string;
  /** The engine id of the app's running web container; throws when there is none. */
  webContainer(app: string): Promise<string>;
}

const FINISHED = ['success', 'build-error', 'crashed-error', 'timeout-error'];

export function useBuildApps(longMs: number): BuildApps {
  let harness: Harness | undefined;
  let instance = '';
  const scratch: string[] = [];
  const archives = new Map<string, string>();

  beforeAll(async () => {
    harness = await startEmulator({ intervals: { ...FAST, bootTimeoutMs: 60_000 } });
    instance = harness.emu.instanceId;
  }, longMs);
  afterAll(async () => {
    for (const app of archives.keys())
      await harness?.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
    await harness?.stop();
    if (instance) removeInstance(instance);
    for (const d of scratch) rmSync(d, { recursive: true, force: true });
  }, longMs);

  const h = (): Harness => {
    if (!harness) throw new Error('the emulator of this file did not start');
    return harness;
  };

  const redeploy = async (app: string): Promise<Deployed> => {
    const before = (await h().call('GET', `/v1/apps/${app}/deployments`)).body.deployments[0]?.id;
    const body = { deployment: { source_url: archives.get(app) } };
    expect((await h().call('POST', `/v1/apps/${app}/deployments`, { body })).status).toBe(201);
    const finished = (x: { id: string; status: string }) => x.id !== before && FINISHED.includes(x.status);
    const d = await waitForDeployment(h(), app, finished, longMs);
    return { d, output: (await h().call('GET', `/v1/apps/${app}/deployments/${d.id}/output`)).text as string };
  };

  return {
    get h() {
      return h();
    },
    async deploy(app, content, env = {}) {
      const root = mkdtempSync(join(tmpdir(), `emu-${app}-`));
      scratch.push(root);
      const dir = join(root, app);
      mkdirSync(dir);
      if (typeof content === 'function') content(dir);
      else for (const [name, text] of Object.entries(content)) writeFileSync(join(dir, name), text);
      const archive = join(root, `${app}.tar.gz`);
      await tarCreate({ gzip: true, file: archive, cwd: root }, [app]);
      expect((await h().call('POST', '/v1/apps', { body: { app: { name: app } } })).status).toBe(201);
      archives.set(app, archive);
      const variables = Object.entries(env).map(([name, value]) => ({ name, value }));
      if (variables.length)
        expect((await h().call('PUT', `/v1/apps/${app}/variables`, { body: { variables } })).status).toBe(200);
      return redeploy(app);
    },
    redeploy,
    archive: (app) => {
      const archive = archives.get(app);
      if (!archive) throw new Error(`${app} was not deployed by this file`);
      return archive;
    },
    async webContainer(app) {
      const appId = (await h().call('GET', `/v1/apps/${app}`)).body.app.id as string;
      const [web] = dockerPs([`${LABELS.appId}=${appId}`, `${LABELS.type}=web`]);
      if (!web) throw new Error(`no running web container for ${app}`);
      return web.id;
    },
  };
}
