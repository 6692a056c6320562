import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { c as tarCreate } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { archiveOf, copyFixture, FAST, waitForDeployment } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';
import { appWithRedis, checkMysqlAddon, checkPythonApp, checkRubyApp } from '../support/stack-addon-checks.ts';

// Issue #15 for the other languages and MySQL: Python and Ruby apps (standard library only) built by
// the buildpack-like build with their default web process, reading a real Redis; a dependency that
// needs the (unreachable) package index fails the build with a clear message; a MySQL addon is a
// real MariaDB server the app's variable points at (the checks of stack-addon-checks.ts, which the registry-path
// images pass too: image-sources.test.ts).
const LONG = 900_000;
const ADMIN = 'admin-token-for-addon-tests-000000';

describe('Python and Ruby apps, MySQL (real Docker, Debian-built images)', () => {
  let h: Harness;
  let instance = '';
  const files: string[] = [];

  const deploy = async (app: string, archive: string) => {
    expect(
      (await h.call('POST', `/v1/apps/${app}/deployments`, { body: { deployment: { source_url: archive } } })).status,
    ).toBe(201);
    const d = await waitForDeployment(h, app, undefined, LONG);
    return { d, output: (await h.call('GET', `/v1/apps/${app}/deployments/${d.id}/output`)).text as string };
  };
  const onMachine = () => ({ h, cli: docker });

  beforeAll(async () => {
    h = await startEmulator({
      adminToken: ADMIN,
      intervals: { ...FAST, bootTimeoutMs: 60_000 },
      addons: { servers: true },
    });
    instance = h.emu.instanceId;
  });
  afterAll(async () => {
    for (const app of ['py-web', 'rb-web', 'my-app', 'py-deps'])
      await h.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
    await h.stop();
    removeInstance(instance);
    for (const f of files) rmSync(f, { recursive: true, force: true });
  }, LONG);

  it(
    'a Python app: detected, default web process, answers through the router with what redis-cli wrote',
    async () => {
      const archive = await archiveOf('python-web');
      files.push(archive);
      await checkPythonApp(onMachine(), 'py-web', archive, await appWithRedis(onMachine(), 'py-web'));
    },
    LONG,
  );

  it(
    'a Ruby app: detected, bundler runs offline, default web process reads Redis',
    async () => {
      const archive = await archiveOf('ruby-web');
      files.push(archive);
      await checkRubyApp(onMachine(), 'rb-web', archive, await appWithRedis(onMachine(), 'rb-web'));
    },
    LONG,
  );

  it(
    'a Python dependency that needs the package index fails the build with a message saying so',
    async () => {
      await h.call('POST', '/v1/apps', { body: { app: { name: 'py-deps' } } });
      const dir = copyFixture('python-web');
      files.push(dir);
      writeFileSync(join(dir, 'requirements.txt'), 'flask==3.0.0\n');
      const archive = join(mkdtempSync(join(tmpdir(), 'emu-archive-')), 'py-deps.tar.gz');
      files.push(archive);
      await tarCreate({ gzip: true, file: archive, cwd: dir }, ['.']);
      const { d, output } = await deploy('py-deps', archive);
      expect(d.status).toBe('build-error');
      expect(output).toContain('The Python package index (PyPI) cannot be reached from the emulator');
      expect(output).toContain('pip download -d vendor');
    },
    LONG,
  );

  it(
    'a MySQL addon is a real MariaDB server: the app variable points at it, the database answers as its user',
    async () => {
      expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'my-app' } } })).status).toBe(201);
      await checkMysqlAddon(onMachine(), 'my-app');
    },
    LONG,
  );

  it(
    "a control-plane reset removes the addon servers, their volumes and the apps' networks too",
    async () => {
      const servers = dockerPs([`${LABELS.owner}=${instance}`, `${LABELS.addonId}`], true);
      expect(servers.length).toBeGreaterThan(0);
      const volumes = servers.map((c) => docker('inspect', '-f', '{{range .Mounts}}{{.Name}}{{end}}', c.id));
      expect((await h.call('POST', '/_emulator/reset', { as: { bearer: ADMIN } })).status).toBe(204);
      await eventually(() => dockerPs([`${LABELS.owner}=${instance}`, `${LABELS.addonId}`], true).length === 0, {
        timeoutMs: 60_000,
        what: 'the addon servers to go',
      });
      await eventually(
        () => {
          const left = docker('volume', 'ls', '-q').split('\n');
          return (
            volumes.every((v) => !left.includes(v)) &&
            !docker('network', 'ls', '--format', '{{.Name}}').includes(`scalingo-emu-${instance}-`)
          );
        },
        { timeoutMs: 30_000, what: 'their volumes and networks to go' },
      );
    },
    LONG,
  );
});
