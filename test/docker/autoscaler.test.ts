import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, waitForStatus } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// The autoscaler against real containers, on the memory metric (CPU readings would depend on what else
// the shared machine runs): web containers hold 60 MB while /tmp/hold exists — a subshell keeps a string
// resident and exits when the file goes, giving the memory back — which the test toggles with `docker
// exec`. The stats sampler reads the engine every second, the autoscaler scales between min and max, and
// the test counts the containers with `docker ps`.
const HOLD = `x=$(head -c 60000000 /dev/zero | tr "\\0" a); while [ -f /tmp/hold ]; do case "$x" in *b*) ;; esac; sleep 1; done`;
const PROCFILE = `web: mkdir -p /tmp/www && echo ok > /tmp/www/index.html && (httpd -f -p $PORT -h /tmp/www &) && while :; do [ -f /tmp/hold ] && sh -c '${HOLD}'; sleep 0.5; done\n`;
const WAIT = { timeoutMs: 90_000, intervalMs: 500 };

describe('autoscaler (real Docker)', () => {
  let h: Harness;
  const dir = copyFixture('busybox-web');
  writeFileSync(join(dir, 'Procfile'), PROCFILE);
  const web = () =>
    dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.appName}=auto-app`, `${LABELS.type}=web`]);
  const hold = (on: boolean) => {
    for (const c of web()) {
      try {
        docker('exec', c.id, 'sh', '-c', on ? 'touch /tmp/hold' : 'rm -f /tmp/hold');
      } catch {
        // a container being replaced: the others carry the load
      }
    }
  };

  beforeAll(async () => {
    h = await startEmulator({
      intervals: { ...FAST, statsSampleMs: 1000 },
      autoscalers: { consecutiveRounds: 2, scaleUpCooldownMs: 0, scaleDownCooldownMs: 0 },
      apps: [{ name: 'auto-app', dir }],
    });
    await waitForStatus(h, 'auto-app', 'running');
  });
  afterAll(async () => {
    if (h) {
      hold(false);
      await h.stop();
      removeInstance(h.emu.instanceId);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('brings web to its minimum, scales out under memory load, and back in when idle, as scalingo-platform-autoscaler', async () => {
    expect(web()).toHaveLength(1);
    const created = await h.call('POST', '/v1/apps/auto-app/autoscalers', {
      body: {
        autoscaler: {
          id: '',
          app_id: '',
          container_type: 'web',
          metric: 'memory',
          target: 0.05,
          min_containers: 2,
          max_containers: 3,
          disabled: false,
        },
      },
    });
    expect(created.status).toBe(201);
    await eventually(
      () => web().length === 2 && h.call('GET', '/v1/apps/auto-app').then((r) => r.body.app.status === 'running'),
      { ...WAIT, what: 'web at its minimum of 2' },
    );

    hold(true);
    await eventually(() => web().length === 3, { ...WAIT, what: 'a third web container under load' });
    hold(false);
    await eventually(() => web().length === 2, { ...WAIT, what: 'back to 2 web containers when idle' });
    expect(web().every((c) => c.state === 'running')).toBe(true);

    const events = (await h.call('GET', '/v1/apps/auto-app/events?per_page=50')).body.events as {
      type: string;
      user: { username: string } | null;
      type_data: { containers: Record<string, string> };
    }[];
    const scales = events
      .filter((e) => e.type === 'scale' && e.user?.username === 'scalingo-platform-autoscaler')
      .map((e) => e.type_data.containers.web)
      .reverse();
    expect(scales).toEqual(['2:M', '3:M', '2:M']);
    const a = (await h.call('GET', `/v1/apps/auto-app/autoscalers/${created.body.autoscaler.id}`)).body.autoscaler;
    expect(a.disabled).toBe(false); // the autoscaler's own scales do not disable it
    expect(a.last_scale).not.toBeNull();
  }, 300_000);
});
