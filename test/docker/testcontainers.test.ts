import { GenericContainer, Wait } from 'testcontainers';
import { beforeAll, describe, expect, it } from 'vitest';
import { EMULATOR_IMAGE, ensureEmulatorImage } from '../../scripts/emulator-image/build.ts';
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { docker } from '../support/docker-cli.ts';
import { freePort } from '../support/free-port.ts';

// The README's Testcontainers example, as a test: `GenericContainer` on the emulator's image, started, waited on
// through the image's health check, its API URL read and used. Testcontainers' reaper (Ryuk) is an image pulled from
// Docker Hub, which this machine cannot reach: it is off here, and the test removes its container itself (with Ryuk,
// a user with internet also gets the container removed when the test process dies).
process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
const LONG = 600_000;
const API_TOKEN = 'testcontainers-api-token-0123456789';

beforeAll(async () => {
  const runtime = createDockerRuntime();
  try {
    await ensureEmulatorImage(runtime, () => undefined);
  } finally {
    await runtime.close();
  }
}, LONG);

describe('Testcontainers: GenericContainer on the emulator image', () => {
  it(
    'starts, waits for health, and answers the API at the URL it gives',
    async () => {
      const [port, routerPort, sshPort] = [await freePort(), await freePort(), await freePort()];
      const container = await new GenericContainer(EMULATOR_IMAGE)
        // The emulator and the apps it starts share the host's loopback (README, "Container image").
        .withNetworkMode('host')
        .withBindMounts([{ source: '/var/run/docker.sock', target: '/var/run/docker.sock' }])
        .withEnvironment({
          EMULATOR_PORT: String(port),
          EMULATOR_ROUTER_PORT: String(routerPort),
          EMULATOR_SSH_PORT: String(sshPort),
          EMULATOR_API_TOKEN: API_TOKEN,
        })
        .withWaitStrategy(Wait.forHealthCheck())
        .withStartupTimeout(60_000)
        .start();
      const id = container.getId();
      try {
        expect(docker('inspect', '--format', '{{.State.Health.Status}}', id)).toBe('healthy');
        const apiUrl = `http://127.0.0.1:${port}`;
        const auth = { authorization: `Basic ${Buffer.from(`:${API_TOKEN}`).toString('base64')}` };
        const apps = await fetch(`${apiUrl}/v1/apps`, { headers: auth });
        expect(apps.status).toBe(200);
        expect(await apps.json()).toEqual({ apps: [] });
        const refused = await fetch(`${apiUrl}/v1/apps`, {
          headers: { authorization: `Basic ${Buffer.from(':not-the-token-0000000').toString('base64')}` },
        });
        expect(refused.status).toBe(401);
      } finally {
        await container.stop({ timeout: 20_000 });
      }
      expect(docker('ps', '-a', '-q', '--filter', `id=${id}`)).toBe('');
    },
    LONG,
  );
});
