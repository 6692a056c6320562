// A container that exits while its starter still waits on it, with the engine's answer that it runs reaching the
// starter after the `die` event (seen under load: an app whose worker crashed in a loop never reached `crashed`, the
// exited container kept as running). The exit is a crash all the same: recorded, and the container restarted.

import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ContainerInfo, LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, waitForOperation, waitForStatus } from '../support/apps.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeRuntime } from '../support/fake-runtime.ts';

/** The next worker exits (code 3) right after the engine answered, for it, that it runs. */
class ExitsAfterInspect extends FakeRuntime {
  armed = false;
  override async inspect(engineId: string): Promise<ContainerInfo | null> {
    const info = await super.inspect(engineId);
    const c = this.containers.get(engineId);
    if (this.armed && c && info?.state === 'running' && info.labels[LABELS.type] === 'worker') {
      this.armed = false;
      this.exited(c, 3);
    }
    return info;
  }
}

describe('a container that exits while it boots', () => {
  const dir = copyFixture('busybox-web');
  const runtime = new ExitsAfterInspect();
  let h: Harness;
  afterAll(async () => {
    await h?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is a crash once its starter marks it running: a crash event, then a new worker runs', async () => {
    writeFileSync(join(dir, 'Procfile'), 'web: exec httpd -f -p $PORT\nworker: sleep 600\n');
    h = await startEmulator({ intervals: FAST, apps: [{ name: 'boot-race', dir }] }, { runtime });
    await waitForStatus(h, 'boot-race', 'running');
    runtime.armed = true;
    const res = await h.call('POST', '/v1/apps/boot-race/scale', {
      body: { containers: [{ name: 'worker', amount: 1 }] },
    });
    await waitForOperation(h, res.headers.get('location') ?? '');
    expect(runtime.armed).toBe(false);
    const crash = await eventually(
      async () => {
        const events = (await h.call('GET', '/v1/apps/boot-race/events?per_page=50')).body.events;
        return events.find((e: { type: string }) => e.type === 'crash');
      },
      { timeoutMs: 10_000, what: 'a crash event for the worker' },
    );
    expect(crash.type_data).toMatchObject({ container: 'worker-1', exit_code: 3 });
    const runningWorkers = () =>
      [...runtime.containers.values()].filter(
        (c) => c.info.labels[LABELS.type] === 'worker' && c.info.state === 'running',
      ).length;
    await eventually(() => runningWorkers() === 1, { timeoutMs: 10_000, what: 'the worker restarted' });
  });
});
