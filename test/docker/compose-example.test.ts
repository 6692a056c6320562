import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMULATOR_IMAGE, ensureEmulatorImage } from '../../scripts/emulator-image/build.ts';
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { routerGet } from '../support/apps.ts';
import { docker, dockerPs, eventually, giveUp, removeInstance } from '../support/docker-cli.ts';
import { freePort } from '../support/free-port.ts';

// The emulator's image (`npm run image`) and examples/compose/docker-compose.yml end to end, with the Compose this
// machine has (Debian's docker-compose, v1): on the example's user-defined network, the client service deploys the
// example app (a PostgreSQL addon from its scalingo.json) and reads its page through the emulator's router; the test
// sees the app's container on that network (and no port of it published), reads the app's logs, runs a one-off from
// the client container, and checks that `docker-compose down -v` leaves nothing of the emulator on the engine. The
// test itself only reaches 127.0.0.1 (the emulator's ports, published there); client → emulator → app is traffic
// between containers on the network.
const LONG = 600_000;
const ROOT = resolve(import.meta.dirname, '../..');
const COMPOSE_FILE = join(ROOT, 'examples/compose/docker-compose.yml');
const project = `emu-compose-${process.pid}`;
const volume = `scalingo-emulator-data-${process.pid}`;
const network = `scalingo-emulator-net-${process.pid}`;
// This run's name of the image ensureEmulatorImage made: another checkout's build on the shared engine may retag
// scalingo-emulator:<version> meanwhile.
const imageVersion = `compose-test-${process.pid}`;
const API_TOKEN = 'compose-test-api-token-0123456789';
const ADMIN_TOKEN = 'compose-test-admin-token-0123456789';
const ports = { api: 0, router: 0, ssh: 0 };
let instance = '';

function compose(...args: string[]) {
  const env = {
    ...process.env,
    EMULATOR_PORT: String(ports.api),
    EMULATOR_ROUTER_PORT: String(ports.router),
    EMULATOR_SSH_PORT: String(ports.ssh),
    EMULATOR_VOLUME: volume,
    EMULATOR_NETWORK: network,
    EMULATOR_VERSION: imageVersion,
    EMULATOR_API_TOKEN: API_TOKEN,
    EMULATOR_ADMIN_TOKEN: ADMIN_TOKEN,
  };
  return spawnSync('docker-compose', ['-p', project, '-f', COMPOSE_FILE, ...args], {
    env,
    encoding: 'utf8',
    timeout: 300_000,
  });
}

const api = (path: string, init: RequestInit = {}) =>
  fetch(`http://127.0.0.1:${ports.api}${path}`, {
    ...init,
    headers: { authorization: `Basic ${Buffer.from(`:${API_TOKEN}`).toString('base64')}`, ...init.headers },
  });

/** Checks the container is attached to the example's network under its alias and publishes no port; its full id. */
function expectOnNetwork(container: string): string {
  const id = docker('inspect', '--format', '{{.Id}}', container).trim();
  const attached = JSON.parse(docker('network', 'inspect', '--format', '{{json .Containers}}', network)) as Record<
    string,
    unknown
  >;
  expect(Object.keys(attached)).toContain(id);
  const endpoint = JSON.parse(
    docker('inspect', '--format', `{{json (index .NetworkSettings.Networks "${network}")}}`, id),
  ) as { Aliases: string[] };
  expect(endpoint.Aliases).toContain(`emu-${id.slice(0, 12)}`);
  expect(docker('port', id).trim()).toBe('');
  return id;
}

/** Containers, volumes and networks of the compose project or of the emulator instance it ran. */
function leftovers(): string[] {
  const containers = docker(
    'ps',
    '-a',
    '--filter',
    `label=com.docker.compose.project=${project}`,
    '--format',
    '{{.Names}}',
  );
  const ofInstance = instance ? dockerPs([`${LABELS.instance}=${instance}`], true).map((c) => c.name) : [];
  const owned = instance ? dockerPs([`${LABELS.owner}=${instance}`], true).map((c) => c.name) : [];
  const volumes = docker('volume', 'ls', '-q', '--filter', `name=${volume}`);
  const instanceVolumes = instance ? docker('volume', 'ls', '-q', '--filter', `name=scalingo-emu-${instance}-`) : '';
  const networks = instance ? docker('network', 'ls', '-q', '--filter', `name=scalingo-emu-${instance}-`) : '';
  const projectNetwork = docker('network', 'ls', '-q', '--filter', `name=${network}`);
  return [containers, ...ofInstance, ...owned, volumes, instanceVolumes, networks, projectNetwork]
    .flatMap((s) => s.split('\n'))
    .filter(Boolean);
}

beforeAll(async () => {
  const which = spawnSync('docker-compose', ['version'], { encoding: 'utf8' });
  if (which.status !== 0) throw new Error('docker-compose is missing: npm test installs it (scripts/needs.sh)');
  const runtime = createDockerRuntime();
  try {
    await ensureEmulatorImage(runtime, () => undefined);
  } finally {
    await runtime.close();
  }
  docker('tag', EMULATOR_IMAGE, `scalingo-emulator:${imageVersion}`);
  ports.api = await freePort();
  ports.router = await freePort();
  ports.ssh = await freePort();
}, LONG);

afterAll(() => {
  // Whatever a failed test left: the project's services and volume, then what the emulator made.
  compose('down', '-v', '--timeout', '30');
  if (instance) removeInstance(instance);
  spawnSync('docker', ['rmi', `scalingo-emulator:${imageVersion}`], { encoding: 'utf8' });
});

describe('the compose example (emulator image + client container)', () => {
  it(
    'deploys through the router, logs, a one-off, a PostgreSQL addon; down -v leaves nothing',
    async () => {
      const up = compose('up', '-d', 'emulator');
      expect(up.status, up.stderr).toBe(0);
      const client = compose('run', '--rm', 'client');
      expect(client.status, `${client.stdout}\n${client.stderr}`).toBe(0);
      // The page the client read through the router: the addon's variable reached the app.
      expect(client.stdout).toMatch(/hello from web-1, database postgres/);

      // Observed from Docker, and from the host's loopback where the emulator's ports are published.
      const health = await eventually(
        () => docker('inspect', '--format', '{{.State.Health.Status}}', `${project}_emulator_1`).trim() === 'healthy',
        { timeoutMs: 30_000, what: 'the emulator container to be healthy' },
      );
      expect(health).toBe(true);
      // One web container, once a previous one of the deployment (restarted for the addon's variables) is gone.
      // It is on the example's network under its alias (how the router reached it for the client), and publishes
      // nothing on the host. A container seen alone may still be that previous one, removed before it is
      // inspected: the checks are made again on the next one (a failed check is the error at the deadline).
      const web = await eventually(
        () => {
          const running = dockerPs([`${LABELS.appName}=compose-web`, `${LABELS.type}=web`]);
          if (running.length !== 1) return null;
          expectOnNetwork(running[0].id);
          return running;
        },
        { timeoutMs: 30_000, what: 'one running web container on the example network' },
      );
      expect(web.map((c) => c.state)).toEqual(['running']);
      instance = docker('inspect', '--format', `{{index .Config.Labels "${LABELS.instance}"}}`, web[0].id).trim();
      expect((await routerGet(ports.router, 'compose-web')).body).toMatch(/^hello from web-1, database postgres\n$/);
      const pg = dockerPs([`${LABELS.owner}=${instance}`]).filter((c) => /postgresql/.test(c.name));
      expect(pg.map((c) => c.state)).toEqual(['running']);
      const ready = spawnSync('docker', ['exec', pg[0].id, 'pg_isready'], { encoding: 'utf8' });
      expect(ready.status, ready.stdout + ready.stderr).toBe(0);
      // The addon server too (db-tunnels and the /server answer reach it there): its address is its alias and port.
      const pgId = expectOnNetwork(pg[0].id);
      const addons = (await (await api('/v1/apps/compose-web/addons')).json()).addons as { id: string }[];
      const server = (await (await api(`/v1/apps/compose-web/addons/${addons[0].id}/server`)).json()).server;
      expect(server).toMatchObject({ running: true, host: `emu-${pgId.slice(0, 12)}`, port: 5432 });

      // The logs of the app, through the API and its logs URL: the web process's first line.
      // The URL names the emulator as the network knows it (EMULATOR_PUBLIC_HOST); the host reaches the same port on
      // 127.0.0.1, where it is published.
      const logsUrl = new URL((await (await api('/v1/apps/compose-web/logs')).json()).logs_url as string);
      expect(logsUrl.host).toBe(`emulator:${ports.api}`);
      logsUrl.host = `127.0.0.1:${ports.api}`;
      let logs = '';
      await eventually(
        async () => {
          logs = await (await fetch(logsUrl)).text();
          return /compose-web listening on \d+/.test(logs);
        },
        { timeoutMs: 30_000, what: 'the web line in the logs' },
      ).catch((err: Error) => {
        throw new Error(`${err.message}; the logs: ${logs}`);
      });
      expect(logs).toMatch(/\[web-1\] compose-web listening on \d+/);

      // A one-off from the client container, attached: its output, and its exit code as the command's (the command is
      // one string run by the one-off's shell, as the official CLI sends it).
      const oneOff = compose(
        'run',
        '--rm',
        '-T',
        '--entrypoint',
        'scalingo-emulator',
        'client',
        'run',
        'compose-web',
        '--',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, in the one-off
        'echo "one-off sees ${SCALINGO_POSTGRESQL_URL%%:*}"; exit 3',
      );
      expect(oneOff.status, oneOff.stderr).toBe(3);
      expect(oneOff.stdout).toContain('one-off sees postgres');

      const down = compose('down', '-v', '--timeout', '30');
      expect(down.status, down.stderr).toBe(0);
      await eventually(
        () => {
          const left = leftovers();
          if (left.length && docker('ps', '-q', '--filter', `label=com.docker.compose.project=${project}`) === '')
            throw giveUp(`left after down -v: ${left.join(', ')}`);
          return left.length === 0;
        },
        { timeoutMs: 30_000, what: 'nothing of the emulator left' },
      );
    },
    LONG,
  );
});

describe("the image's bad set-ups: one line on stderr, exit 1", () => {
  const run = (...args: string[]) =>
    spawnSync('docker', ['run', '--rm', ...args], { encoding: 'utf8', timeout: 60_000 });

  it('no engine socket: not mounted, or mounted from a path that does not exist', () => {
    const unmounted = run(EMULATOR_IMAGE);
    expect(unmounted.status).toBe(1);
    expect(unmounted.stderr.trim().split('\n')).toEqual([
      "scalingo-emulator: no Docker engine socket at /var/run/docker.sock: mount the engine's socket (-v /var/run/docker.sock:/var/run/docker.sock) or set DOCKER_HOST",
    ]);
    // The engine makes a directory for a bind whose source is missing: an anonymous volume stands in for it here.
    const notASocket = run('-v', '/var/run/docker.sock', EMULATOR_IMAGE);
    expect(notASocket.status).toBe(1);
    expect(notASocket.stderr).toMatch(/^scalingo-emulator: no Docker engine socket at \/var\/run\/docker\.sock: /);
  });

  it('a read-only data volume', () => {
    const volume = `emu-ro-data-${process.pid}`;
    docker('volume', 'create', volume);
    try {
      const ro = run('-v', '/var/run/docker.sock:/var/run/docker.sock', '-v', `${volume}:/data:ro`, EMULATOR_IMAGE);
      expect(ro.status).toBe(1);
      expect(ro.stderr.trim().split('\n')).toEqual([
        'scalingo-emulator: the data directory /data is not writable (a read-only volume?): mount a writable volume there',
      ]);
    } finally {
      docker('volume', 'rm', volume);
    }
  });
});
