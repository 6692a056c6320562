import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { findRecipe, type ImageRecipe } from '../../src/runtime/image-recipes.ts';
import { BUSYBOX_REGISTRY_IMAGE, ensureBusyboxImage } from '../../src/runtime/images.ts';
import { ensureRecipeImage } from '../../src/runtime/recipe-images.ts';
import { registryBase } from '../../src/runtime/registry-images.ts';
import { debianSuite } from '../../src/runtime/rootfs.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { archiveOf, FAST, waitForDeployment } from '../support/apps.ts';
import { eventually, giveUp } from '../support/docker-cli.ts';
import { freePort } from '../support/free-port.ts';
import { type NetnsDockerd, startNetnsDockerd } from '../support/netns-dockerd.ts';
import { uploadImage } from '../support/registry-upload.ts';
import {
  appWithRedis,
  checkMysqlAddon,
  checkNodeApp,
  checkPostgresAndRedis,
  checkPythonApp,
  checkRubyApp,
  type EngineUnderTest,
} from '../support/stack-addon-checks.ts';

// Issue 36: the images from the engine's registry, on an engine that has no image of the emulator's and a
// host without mmdebstrap (as on macOS or Fedora with Docker Desktop). The engine is a second dockerd in a
// network namespace this test makes (as the swarm test's second node), reached through its socket; its
// registry mirror is Debian's `docker-registry` on that namespace's loopback, holding stand-ins pushed under
// the official names (this machine pulls nothing from Docker Hub): the Debian-built server images of the machine's
// engine and its three stacks merged into one base, which already hold every package the adapting build would install. They are uploaded from
// the machine's engine (`docker save`, layers uncompressed: registry-upload.ts) to a second registry process on the
// machine's loopback over the same storage. The containers'
// ports are published on the namespace's end of a veth pair the test makes, where the router reaches them.
// First without a mirror (the addon ends in error, the deployment in build-error, each naming both ways), then
// with it (SIGHUP reloads the daemon's registry-mirrors): the stack and addon checks the Debian-made images pass
// (stack-addon-checks.ts) on every image the registry path makes: PostgreSQL, Redis and MySQL servers, Node, Python
// and Ruby apps through the router.
const LONG = 900_000;
const APP_FAILING = 'img-nowhere';
const APP = 'img-mirror';
const APP_PYTHON = 'img-python';
const APP_RUBY = 'img-ruby';
const tag = randomBytes(3).toString('hex');
const ns = `emu-img-${tag}`;
const hostIf = `emim${tag}h`;
const nsIf = `emim${tag}n`;
const octet = 100 + (randomBytes(1)[0] % 100);
const hostAddr = `10.233.${octet}.1`;
const engineAddr = `10.233.${octet}.2`;
// The namespace is this test's own: nothing else listens on its loopback.
const MIRROR = '127.0.0.1:5000';
/** Every image the registry path makes: the three stacks (one official base) and the three addon servers. */
const RECIPES = ['node', 'python', 'ruby', 'postgresql', 'mysql', 'redis'].map((id) => findRecipe(id) as ImageRecipe);
const STACKS = RECIPES.filter((r) => r.kind === 'stack');
/**
 * The stacks' one official base (`debian:<suite>-slim`) stands in as the Debian-built stacks merged: each stack's
 * layer over the Node stack's, dpkg's status the union of theirs (the first stanza of a package kept; one suite, one
 * version), so the adapting build finds every package of every stack installed.
 */
const mergedDpkgStatus = (statuses: string[]): Buffer => {
  const seen = new Set<string>();
  const kept = statuses
    .flatMap((status) => status.split(/\n\s*\n/))
    .filter((stanza) => {
      const name = /^Package: (.+)$/m.exec(stanza)?.[1];
      if (!stanza.trim() || !name || seen.has(name)) return false;
      seen.add(name);
      return true;
    });
  return Buffer.from(kept.map((stanza) => `${stanza.trim()}\n\n`).join(''));
};
/** The base image as a machine without a static busybox makes it (from the official busybox image). */
const BASE = `scalingo-emu-test/base-${tag}:1`;

const execFileAsync = promisify(execFile);
const run = (cmd: string, ...args: string[]) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 }).trim();
const quiet = (cmd: string, ...args: string[]) => {
  try {
    run(cmd, ...args);
  } catch {
    // undoing what may not have been done
  }
};

/** PATH with every directory holding mmdebstrap replaced by a copy (of links) without it. */
function pathWithoutMmdebstrap(root: string): string {
  return (process.env.PATH ?? '')
    .split(':')
    .map((d, i) => {
      if (!d || !existsSync(join(d, 'mmdebstrap'))) return d;
      const shadow = join(root, `bin-${i}`);
      mkdirSync(shadow, { recursive: true });
      for (const f of readdirSync(d)) if (f !== 'mmdebstrap') symlinkSync(join(d, f), join(shadow, f));
      return shadow;
    })
    .join(':');
}

describe('images from the engine’s registry, without mmdebstrap (a second engine with a registry mirror)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'emu-img-src-'));
  const daemonJson = join(dir, 'daemon.json');
  const path = process.env.PATH;
  let engine: NetnsDockerd | undefined;
  const registries: ChildProcess[] = [];
  let h: Harness | undefined;
  let archive = '';
  const archives: Record<string, string> = {};
  /** Official name → the digest the registry got at the push. */
  const pushed = new Map<string, string>();
  const inNs = (...args: string[]) => run('nsenter', `--net=/var/run/netns/${ns}`, ...args);
  /** Debian's docker-registry on `addr` (in the namespace when it is the mirror), over `storage`. */
  const startRegistry = (name: string, addr: string, storage: string, mirror: boolean): ChildProcess => {
    const config = join(dir, `${name}.yml`);
    const readonly = mirror ? '  maintenance:\n    readonly:\n      enabled: true\n' : '';
    writeFileSync(
      config,
      `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${storage}\n${readonly}http:\n  addr: ${addr}\n`,
    );
    const cmd = mirror
      ? ['nsenter', [`--net=/var/run/netns/${ns}`, 'docker-registry', 'serve', config]]
      : ['docker-registry', ['serve', config]];
    const child = spawn(cmd[0] as string, cmd[1] as string[], { stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('error', () => undefined);
    registries.push(child);
    return child;
  };

  beforeAll(async () => {
    if (!existsSync('/usr/bin/docker-registry'))
      throw new Error("Debian's docker-registry is not installed: npm test's set-up installs it (scripts/needs.sh)");
    // The stand-ins' sources: the machine's Debian-built images (built now when missing, mmdebstrap still on PATH).
    const main = createDockerRuntime();
    for (const r of RECIPES) await ensureRecipeImage(main, r, { source: 'debian' });
    await main.ensureBaseImage(DEFAULT_STACK_IMAGE);
    await main.close();

    run('ip', 'netns', 'add', ns);
    run('ip', 'link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf, 'netns', ns);
    run('ip', 'addr', 'add', `${hostAddr}/24`, 'dev', hostIf);
    run('ip', 'link', 'set', hostIf, 'up');
    run('ip', '-n', ns, 'addr', 'add', `${engineAddr}/24`, 'dev', nsIf);
    run('ip', '-n', ns, 'link', 'set', nsIf, 'up');
    run('ip', '-n', ns, 'link', 'set', 'lo', 'up');

    // The stand-ins are uploaded from the machine's engine to a registry on the machine's loopback, under the official
    // names; the mirror is a second registry process on the namespace's loopback serving the same storage, read-only.
    const storage = join(dir, 'registry');
    const pushPort = await freePort();
    const pusher = startRegistry('push', `127.0.0.1:${pushPort}`, storage, false);
    await eventually(
      async () => {
        if (pusher.exitCode !== null) throw giveUp(`docker-registry exited (${pusher.exitCode})`);
        return (await fetch(`http://127.0.0.1:${pushPort}/v2/`)).ok;
      },
      { timeoutMs: 30_000, what: 'the pushed-to registry answering' },
    );
    // The busybox stand-in is the base image of the host's busybox: a static busybox at /bin/busybox, as the official one.
    const stacksBase = registryBase(STACKS[0], debianSuite()).image;
    expect(STACKS.map((r) => registryBase(r, r.suite ?? debianSuite()).image)).toEqual(STACKS.map(() => stacksBase));
    // The last stack's status first, then the others in order (as the dpkg database of the stacks copied in order).
    const statuses = await Promise.all(
      [...STACKS.slice(-1), ...STACKS.slice(0, -1)].map(async (r) => {
        const args = ['run', '--rm', '--network', 'none', '--entrypoint', 'cat', r.tag, '/var/lib/dpkg/status'];
        return (await execFileAsync('docker', args, { maxBuffer: 64 * 1024 * 1024 })).stdout;
      }),
    );
    const standins: [string, string[], Record<string, Buffer>][] = [
      [stacksBase, STACKS.map((r) => r.tag), { 'var/lib/dpkg/status': mergedDpkgStatus(statuses) }],
      ...RECIPES.filter((r) => r.kind === 'addon').map((r): [string, string[], Record<string, Buffer>] => [
        registryBase(r, debianSuite()).image,
        [r.tag],
        {},
      ]),
      [BUSYBOX_REGISTRY_IMAGE, [DEFAULT_STACK_IMAGE], {}],
    ];
    // Side by side, each layer sent uncompressed as `docker save` streams it (registry-upload.ts: no gzip, no build).
    await Promise.all(
      standins.map(async ([official, images, files]) => {
        pushed.set(official, await uploadImage(`127.0.0.1:${pushPort}`, `library/${official}`, images, files));
      }),
    );
    const mirror = startRegistry('mirror', MIRROR, storage, true);
    await eventually(
      () => {
        if (mirror.exitCode !== null) throw giveUp(`docker-registry exited (${mirror.exitCode})`);
        return inNs('busybox', 'wget', '-q', '-O', '-', `http://${MIRROR}/v2/`) === '{}';
      },
      { timeoutMs: 30_000, what: 'the mirror answering' },
    );

    writeFileSync(daemonJson, '{}');
    engine = await startNetnsDockerd({
      ns,
      dir,
      tag,
      bip: `10.234.${octet}.1/24`,
      args: ['--config-file', daemonJson],
    });
    expect(engine.cli('images', '-q')).toBe('');
    archive = await archiveOf('node-pg-redis');
    for (const fixture of ['python-web', 'ruby-web']) archives[fixture] = await archiveOf(fixture);
    process.env.PATH = pathWithoutMmdebstrap(dir);
    h = await startEmulator({
      docker: { host: `unix://${engine.socket}`, publishHost: engineAddr },
      addons: { servers: true },
      intervals: { ...FAST, bootTimeoutMs: 60_000 },
    });
  }, LONG);

  afterAll(async () => {
    process.env.PATH = path;
    for (const app of [APP_FAILING, APP, APP_PYTHON, APP_RUBY])
      await h?.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
    await h?.stop();
    // Every container, image and volume of this test is the second engine's: they go with its data root.
    if (engine && !(await engine.stop())) throw new Error(`the second dockerd (${engine.pid()}) did not stop`);
    for (const r of registries) r.kill('SIGTERM');
    quiet('ip', 'link', 'del', hostIf);
    quiet('ip', 'netns', 'del', ns);
    rmSync(dir, { recursive: true, force: true });
    for (const a of [archive, ...Object.values(archives)]) if (a) rmSync(a, { force: true });
  }, LONG);

  const call = (method: string, p: string, body?: unknown) =>
    (h as Harness).call(method, p, body === undefined ? {} : { body });

  it(
    'neither a mirror nor mmdebstrap: the addon ends in error and the deployment in build-error, each naming both ways',
    async () => {
      expect(run('sh', '-c', 'command -v mmdebstrap || echo none')).toBe('none');
      expect((await call('POST', '/v1/apps', { app: { name: APP_FAILING } })).status).toBe(201);
      const added = await call('POST', `/v1/apps/${APP_FAILING}/addons`, {
        addon: { addon_provider_id: 'scalingo-redis', plan_id: 'redis-sandbox' },
      });
      expect(added.status).toBe(201);
      const addon = await eventually(
        async () => {
          const a = (await call('GET', `/v1/apps/${APP_FAILING}/addons/${added.body.addon.id}`)).body.addon;
          if (a.status === 'running') throw giveUp('the addon runs: its image came from somewhere');
          return a.status === 'error' ? a : null;
        },
        { timeoutMs: 120_000, what: 'the redis addon in error' },
      );
      expect(addon.status_message).toContain(
        'building the Redis server image (scalingo-emulator/addon-redis:2) failed',
      );
      expect(addon.status_message).toContain('mmdebstrap is not installed');
      expect(addon.status_message).toContain("the engine's registry, the other way, could not give it either");
      expect(addon.status_message).toContain('pulling redis:7 failed');

      const posted = await call('POST', `/v1/apps/${APP_FAILING}/deployments`, { deployment: { source_url: archive } });
      expect(posted.status).toBe(201);
      const d = await waitForDeployment(h as Harness, APP_FAILING, undefined, LONG);
      const output = (await call('GET', `/v1/apps/${APP_FAILING}/deployments/${d.id}/output`)).text as string;
      expect(d.status, output).toBe('build-error');
      expect(output).toContain(`pulling debian:${debianSuite()}-slim from the engine's registry`);
      expect(output).toContain('trying the Debian path');
      expect(output).toContain('failed: mmdebstrap is not installed');
      expect(output).toContain(`could not give it either: pulling debian:${debianSuite()}-slim failed`);
      // No static busybox on the host (as on macOS) and no registry: the base image fails naming both ways.
      await expect(
        ensureBusyboxImage(new Docker({ socketPath: (engine as NetnsDockerd).socket }), BASE, []),
      ).rejects.toThrow(
        /^no static busybox on this machine \(looked at \) and the engine could not build from busybox:stable-musl \(.+\): let the engine reach Docker Hub or a registry mirror, or install Debian's busybox-static$/,
      );
      // Observed on the engine: no image of the emulator's recipes was made.
      expect(
        engine?.cli('images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', 'label=io.scalingo-emulator.recipe'),
      ).toBe('');
    },
    LONG,
  );

  it(
    "with the mirror: every stack and addon server image from the engine's registry passes the Debian-path images' checks",
    async () => {
      const e = engine as NetnsDockerd;
      writeFileSync(daemonJson, JSON.stringify({ 'registry-mirrors': [`http://${MIRROR}`] }));
      process.kill(e.pid(), 'SIGHUP');
      await eventually(() => e.cli('info', '--format', '{{json .RegistryConfig.Mirrors}}').includes(MIRROR), {
        timeoutMs: 30_000,
        what: 'the second engine to take the mirror',
      });

      // The stack and addon checks the Debian-made images pass (stack-addon-checks.ts), on this engine's images.
      const t: EngineUnderTest = { h: h as Harness, cli: e.cli };
      expect((await call('POST', '/v1/apps', { app: { name: APP } })).status).toBe(201);
      const servers = await checkPostgresAndRedis(t, APP);
      const output = await checkNodeApp(t, APP, archive, servers);
      expect(output).toContain(`pulling debian:${debianSuite()}-slim from the engine's registry`);
      expect(output).toContain('the image has every package the recipe needs');
      expect(output).not.toContain('building from Debian');
      // The other stacks and the MySQL server side by side: each is its own app.
      const [mysqlId] = await Promise.all([
        checkMysqlAddon(t, APP),
        appWithRedis(t, APP_PYTHON).then((redis) => checkPythonApp(t, APP_PYTHON, archives['python-web'], redis)),
        appWithRedis(t, APP_RUBY).then((redis) => checkRubyApp(t, APP_RUBY, archives['ruby-web'], redis)),
      ]);

      // Observed on the engine: each image made from the official one the mirror served, by its pushed digest.
      for (const r of RECIPES) {
        const official = registryBase(r, r.suite ?? debianSuite()).image;
        const labels = JSON.parse(e.cli('image', 'inspect', '--format', '{{json .Config.Labels}}', r.tag));
        expect(labels['io.scalingo-emulator.base'], r.tag).toBe('registry');
        expect(labels['io.scalingo-emulator.base-image'], r.tag).toBe(
          `${official.split(':')[0]}@${pushed.get(official)}`,
        );
      }
      // The servers run on those images.
      for (const [id, image] of [
        [servers.pg.id, 'scalingo-emulator/addon-postgresql:1'],
        [servers.redis.id, 'scalingo-emulator/addon-redis:2'],
        [mysqlId, 'scalingo-emulator/addon-mysql:2'],
      ]) {
        const ps = e.cli('ps', '--filter', `label=${LABELS.addonId}=${id}`, '--format', '{{.Image}} {{.State}}');
        expect(ps).toBe(`${image} running`);
      }

      // The base image without a host busybox: the official image's, through the mirror; its shell and httpd run.
      expect(await ensureBusyboxImage(new Docker({ socketPath: e.socket }), BASE, [])).toBe(true);
      expect(
        e.cli('image', 'inspect', '--format', '{{index .Config.Labels "io.scalingo-emulator.base-image"}}', BASE),
      ).toBe(BUSYBOX_REGISTRY_IMAGE);
      expect(e.cli('run', '--rm', BASE, 'sh', '-c', '[ -L /bin/httpd ] && echo "httpd $HOME"')).toBe('httpd /app');
    },
    LONG,
  );
});
