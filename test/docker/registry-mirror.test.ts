import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { c as tarCreate } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FAST, routerGet, waitForDeployment } from '../support/apps.ts';
import { docker, dockerPs, removeInstance } from '../support/docker-cli.ts';
import { type NpmMirror, startNpmMirror } from '../support/npm-mirror.ts';

// Issue 34, point 2: the host's npm configuration decides the registry (a user behind a mirror), and a
// lockfile whose URLs name another registry host — here one that does not exist (`.invalid`, RFC 6761)
// — is fetched through that registry. The mirror is a server on 127.0.0.1 this test runs; the host's npm
// is pointed at it by its own configuration (`npm_config_registry`), and the mirror's log shows what
// the builds fetched from it.
const LONG = 900_000;
const FIXTURES = resolve(import.meta.dirname, '../../fixtures/apps');
const NOWHERE = 'https://npm.registry.invalid/';

/** The lockfile with its packages' URLs on NOWHERE (npm's entries get a `resolved` when they have none). */
const elsewhere = (text: string, from: string) => {
  if (!text.startsWith('{')) return text.replaceAll(from, NOWHERE);
  const lock = JSON.parse(text);
  for (const [path, entry] of Object.entries<{ version?: string; resolved?: string }>(lock.packages)) {
    const name = path.replace(/^node_modules\//, '');
    if (path) entry.resolved = `${NOWHERE}${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
  }
  return JSON.stringify(lock, null, 2);
};

/** The newest version of `spec` the host's (real) registry publishes. */
const newest = (spec: string): string => {
  const v = JSON.parse(execFileSync('npm', ['view', spec, 'version', '--json'], { encoding: 'utf8' }));
  return Array.isArray(v) ? v[v.length - 1] : v;
};

/**
 * What the build's Node.js image needs from the registry (the default line, 24, with its npm and corepack),
 * one version each: the mirror lists only those, so the build resolves to them.
 */
function nodeRuntimeSpecs(): string[] {
  const pkg = `node-linux-${process.arch === 'arm64' ? 'arm64' : 'x64'}`;
  return [`${pkg}@${newest(`${pkg}@24`)}`, `npm@${newest('npm@11')}`, `corepack@${newest('corepack')}`];
}

describe('builds behind a registry mirror (real Docker)', () => {
  let h: Harness;
  let mirror: NpmMirror;
  let instance = '';
  const before = process.env.npm_config_registry;
  const files: string[] = [];

  beforeAll(async () => {
    // Yarn 1 itself and its version list come from the registry too (the default `1.22.x` range), and so
    // do the Node.js binary, npm and corepack of the build's image.
    mirror = await startNpmMirror(['ms@2.1.3', 'left-pad@1.3.0', 'yarn@1.22.22', ...nodeRuntimeSpecs()], ['yarn']);
    process.env.npm_config_registry = mirror.url;
    h = await startEmulator({ intervals: { ...FAST, bootTimeoutMs: 60_000 } });
    instance = h.emu.instanceId;
  }, LONG);
  afterAll(async () => {
    for (const app of ['mirror-npm', 'mirror-yarn1'])
      await h?.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
    await h?.stop();
    if (instance) removeInstance(instance);
    if (before === undefined) delete process.env.npm_config_registry;
    else process.env.npm_config_registry = before;
    await mirror?.close();
    for (const f of files) rmSync(f, { recursive: true, force: true });
  }, LONG);

  for (const [app, fixture, lockfile, from] of [
    ['mirror-npm', 'pm-npm', 'package-lock.json', 'https://registry.npmjs.org/'],
    ['mirror-yarn1', 'pm-yarn1', 'yarn.lock', 'https://registry.yarnpkg.com/'],
  ] as const)
    it(
      `${lockfile} naming an unreachable registry host: the packages come through the host's mirror`,
      async () => {
        const root = mkdtempSync(join(tmpdir(), `emu-${app}-`));
        files.push(root);
        cpSync(join(FIXTURES, fixture), join(root, app), { recursive: true });
        const lock = join(root, app, lockfile);
        writeFileSync(lock, elsewhere(readFileSync(lock, 'utf8'), from));
        expect(readFileSync(lock, 'utf8')).toContain(`${NOWHERE}ms/-/ms-2.1.3.tgz`);
        const archive = join(root, `${app}.tar.gz`);
        await tarCreate({ gzip: true, file: archive, cwd: root }, [app]);
        expect((await h.call('POST', '/v1/apps', { body: { app: { name: app } } })).status).toBe(201);
        const served = mirror.requests.length;
        const posted = await h.call('POST', `/v1/apps/${app}/deployments`, {
          body: { deployment: { source_url: archive } },
        });
        expect(posted.status).toBe(201);
        const d = await waitForDeployment(h, app, undefined, LONG);
        const output = (await h.call('GET', `/v1/apps/${app}/deployments/${d.id}/output`)).text as string;
        expect(d.status, output).toBe('success');
        expect(output).toContain(`of ${lockfile} through ${mirror.url}`);
        expect(mirror.requests.slice(served)).toEqual(
          expect.arrayContaining(['/ms/-/ms-2.1.3.tgz', '/left-pad/-/left-pad-1.3.0.tgz']),
        );
        const appId = (await h.call('GET', `/v1/apps/${app}`)).body.app.id as string;
        const [web] = dockerPs([`${LABELS.appId}=${appId}`, `${LABELS.type}=web`]);
        expect(web, 'a running web container').toBeTruthy();
        expect(docker('exec', web.id, 'cat', `/app/${lockfile}`)).toContain(NOWHERE);
        expect((await routerGet(h.emu.urls.routerPort, app)).body).toBe('*****built by nobody 1h left-pad:absent');
      },
      LONG,
    );
});
