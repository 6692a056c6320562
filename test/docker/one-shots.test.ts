// Containers that only run to completion are removed when finished (issue 35): after a buildpack
// build (its dependency step runs in a container), a postdeploy hook and a detached one-off, Docker
// holds no exited or created container of the emulator, only the app's running ones.

import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, waitForDeployment } from '../support/apps.ts';
import { docker, eventually, removeInstance } from '../support/docker-cli.ts';

const APP = 'one-shots-app';

/** Every container of the instance: apps and one-offs (instance label), builds, hooks, addon servers (owner label). */
function containersOf(instance: string): { name: string; state: string; type: string }[] {
  return [LABELS.instance, LABELS.owner].flatMap((label) =>
    docker(
      'ps',
      '-a',
      '--filter',
      `label=${label}=${instance}`,
      '--format',
      `{{.Names}}\t{{.State}}\t{{.Label "${LABELS.type}"}}`,
    )
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [name, state, type] = l.split('\t');
        return { name, state, type };
      }),
  );
}

describe('one-shot containers are removed once finished (real Docker)', () => {
  let h: Harness;
  const dir = copyFixture('python-web');
  writeFileSync(join(dir, 'Procfile'), 'web: exec python3 -m http.server $PORT\npostdeploy: echo migrated-$((6*7))\n');

  beforeAll(async () => {
    h = await startEmulator({ intervals: FAST, apps: [{ name: APP, dir }] });
  });
  afterAll(async () => {
    await h.stop();
    removeInstance(h.emu.instanceId);
    rmSync(dir, { recursive: true, force: true });
  });

  it('after a build with a dependency step, a postdeploy hook and a detached one-off: no exited container', async () => {
    const d = await waitForDeployment(h, APP, undefined, 240_000);
    const output = (await h.call('GET', `/v1/apps/${APP}/deployments/${d.id}/output`)).text;
    expect(d.status, output).toBe('success');
    // The build ran its dependency step and the hook in containers of their own.
    expect(output).toMatch(/pip|Python/i);
    expect(output).toContain('migrated-42');
    const run = await h.call('POST', `/v1/apps/${APP}/run`, { body: { command: 'echo one-off-done', detached: true } });
    expect(run.status).toBe(200);
    await eventually(
      async () =>
        !((await h.call('GET', `/v1/apps/${APP}/ps`)).body.containers as { type: string }[]).some(
          (c) => c.type === 'one-off',
        ),
      { timeoutMs: 60_000, what: 'the one-off gone from ps' },
    );
    // Their removal is not waited for by the work that ran them: polled until the engine holds only what runs.
    await eventually(() => containersOf(h.emu.instanceId).every((c) => c.state === 'running'), {
      timeoutMs: 30_000,
      what: `only running containers: ${JSON.stringify(containersOf(h.emu.instanceId))}`,
    });
    expect(containersOf(h.emu.instanceId).map((c) => c.type)).toEqual(['web']);
  }, 300_000);
});
