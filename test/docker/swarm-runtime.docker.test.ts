// The swarm runtime (docker.mode "swarm") on a real swarm made by the test on this machine's engine: the
// runtime contract on one node, then a second node (a second dockerd in a network namespace the test
// creates, joined to the swarm) for what only two nodes show. One file, so that one swarm at a time
// exists: the engine can only be in one, and other files' plain containers keep running meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSwarmRuntime, NOT_A_MANAGER } from '../../src/runtime/swarm-runtime.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { docker } from '../support/docker-cli.ts';
import { startSwarm, type SwarmCluster } from '../support/swarm-cluster.ts';
import { runtimeContract } from '../contract/runtime-contract.ts';

let cluster: SwarmCluster | undefined;

/** Services and plain containers labelled `label`, removed through the engine's CLI. */
function removeServicesByLabel(label: string): void {
  const ids = docker('service', 'ls', '-q', '--filter', `label=${label}`);
  if (ids) docker('service', 'rm', ...ids.split('\n'));
  const plain = docker('ps', '-aq', '--filter', `label=${label}`);
  if (plain) docker('rm', '-f', ...plain.split('\n'));
}

it('before the swarm exists, the runtime says at start that the engine is not a swarm manager', async () => {
  const rt = createSwarmRuntime({ env: {} });
  expect(await rt.probe()).toEqual({ ok: false, error: NOT_A_MANAGER });
  await rt.close();
});

describe('swarm runtime', () => {
  beforeAll(async () => {
    cluster = await startSwarm();
  });
  afterAll(async () => {
    await cluster?.leave();
    // Nothing of the swarm is left on the shared engine.
    expect(docker('info', '--format', '{{.Swarm.LocalNodeState}}')).toBe('inactive');
  });

  it('a one-node swarm is up (this engine is its manager)', () => {
    expect(docker('node', 'ls', '--format', '{{.Self}} {{.ManagerStatus}}')).toBe('true Leader');
  });

  runtimeContract('Swarm (one node: services of one replica, plain containers for terminals)', () => {
    const runtime = createSwarmRuntime({ env: {} });
    return {
      runtime,
      async cleanup(labels) {
        await runtime.close();
        removeServicesByLabel(`${LABELS.instance}=${labels[LABELS.instance]}`);
      },
    };
  });

  it('other plain containers of the engine keep working while it is a swarm manager', () => {
    expect(docker('run', '--rm', DEFAULT_STACK_IMAGE, 'echo', 'plain-run-ok')).toBe('plain-run-ok');
  });

});
