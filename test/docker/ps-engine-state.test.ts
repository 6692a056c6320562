import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, waitForOperation, waitForStatus } from '../support/apps.ts';
import { docker, dockerPs, giveUp, removeInstance } from '../support/docker-cli.ts';

// #10 ps answers from one engine list of the app's containers, at each call: a container changed behind the
// emulator's back shows in the very next answer. `docker pause` is a change no engine event handler of the
// emulator acts on, so only the engine's state at the call can show it (and its undoing).
type PsContainer = { id: string; label: string; state: string };

describe('ps and containers changed behind the emulator (real Docker)', () => {
  let h: Harness;
  const dir = copyFixture('busybox-web');
  const ps = async () => {
    const res = await h.call('GET', '/v1/apps/ps-app/ps');
    expect(res.status).toBe(200);
    return res.body.containers as PsContainer[];
  };
  /** The engine id of the container ps lists as `id`, found by its label in Docker. */
  const engineIdOf = (psId: string) => {
    const [c] = dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.containerId}=${psId}`]);
    if (!c) throw giveUp(`no running container in Docker carries the ps id ${psId}`);
    return c.id;
  };

  beforeAll(async () => {
    h = await startEmulator({ intervals: FAST, apps: [{ name: 'ps-app', dir }] });
    await waitForStatus(h, 'ps-app', 'running');
    const scale = await h.call('POST', '/v1/apps/ps-app/scale', { body: { containers: [{ name: 'web', amount: 2 }] } });
    expect(scale.status).toBe(202);
    await waitForOperation(h, scale.headers.get('location') ?? '');
  });
  afterAll(async () => {
    await h.stop();
    removeInstance(h.emu.instanceId);
    rmSync(dir, { recursive: true, force: true });
  });

  it('docker pause of a web container: the next ps says it is not running (crashed); docker unpause: running again', async () => {
    const [web] = (await ps()).filter((c) => c.label === 'web-2');
    if (!web) throw giveUp('ps lists no web-2');
    const engineId = engineIdOf(web.id);
    docker('pause', engineId);
    try {
      expect((await ps()).find((c) => c.id === web.id)?.state).toBe('crashed');
    } finally {
      docker('unpause', engineId);
    }
    expect((await ps()).find((c) => c.id === web.id)?.state).toBe('running');
  });

  it('docker kill, then docker rm -f of a web container: the next ps no longer says it runs; the other one still does', async () => {
    const before = (await ps()).filter((c) => c.label.startsWith('web-'));
    expect(before.map((c) => [c.label, c.state]).sort()).toEqual([
      ['web-1', 'running'],
      ['web-2', 'running'],
    ]);
    const [killed, removed] = before.sort((a, b) => a.label.localeCompare(b.label));

    docker('kill', engineIdOf(killed.id));
    const afterKill = await ps();
    // Listed as crashed (the engine says exited) or already gone from the answer (its `die` event was handled).
    expect(afterKill.find((c) => c.id === killed.id)?.state ?? 'absent').toMatch(/^(crashed|absent)$/);
    expect(afterKill.find((c) => c.id === removed.id)?.state).toBe('running');

    docker('rm', '-f', engineIdOf(removed.id));
    const afterRemove = await ps();
    expect(afterRemove.find((c) => c.id === removed.id)?.state ?? 'absent').toMatch(/^(crashed|absent)$/);
  });
});
