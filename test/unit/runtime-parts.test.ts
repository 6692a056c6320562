import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { containerInfoOf, createOptionsOf, managedFilter } from '../../src/runtime/docker-containers.ts';
import { runtimeEventOf } from '../../src/runtime/docker-events.ts';
import { addressOf, networkAlias, REACH_PORT_LABEL, type Reach } from '../../src/runtime/reach.ts';
import { LABELS, RuntimeError } from '../../src/runtime/runtime.ts';
import { type SwarmNodes } from '../../src/runtime/swarm-nodes.ts';
import { createSwarmPlacement } from '../../src/runtime/swarm-placement.ts';
import { type SwarmTasks } from '../../src/runtime/swarm-tasks.ts';
import { FakeRuntime } from '../support/fake-runtime.ts';

// The engine adapters' parts, each on its own (the whole runtimes: the contract suite, test/contract/).

describe('docker-events: runtimeEventOf', () => {
  it('a container event the runtime passes on, with its exit code, labels and engine time', () => {
    const line = JSON.stringify({
      Action: 'die',
      Actor: { ID: 'abc', Attributes: { exitCode: '137', [LABELS.appId]: 'app-1' } },
      timeNano: 1_700_000_000_123_456_800,
    });
    expect(runtimeEventOf(line)).toEqual({
      event: {
        engineId: 'abc',
        action: 'die',
        exitCode: 137,
        labels: { exitCode: '137', [LABELS.appId]: 'app-1' },
        time: 1_700_000_000_123,
      },
      key: 'abc/die',
      timeNano: 1_700_000_000_123_456_800,
    });
  });

  it('an action is read up to its colon; other actions, blank and broken lines are skipped', () => {
    expect(runtimeEventOf(JSON.stringify({ Action: 'stop', Actor: { ID: 'x' } }))?.event).toMatchObject({
      action: 'stop',
      exitCode: null,
      labels: {},
    });
    expect(runtimeEventOf(JSON.stringify({ Action: 'exec_start: sh -c true', Actor: { ID: 'x' } }))).toBeNull();
    expect(runtimeEventOf(JSON.stringify({ Action: 'attach', Actor: { ID: 'x' } }))).toBeNull();
    expect(runtimeEventOf('   ')).toBeNull();
    expect(runtimeEventOf('{"Action": "die"')).toBeNull();
  });
});

describe('docker-containers: what is sent to and read from the engine', () => {
  const published: Reach = { kind: 'published', publishHost: '127.0.0.1' };
  const onNetwork: Reach = { kind: 'network', network: 'ci-net' };
  const inspected = (o: {
    running: boolean;
    bindings: { HostIp: string; HostPort: string }[];
    networks?: Record<string, object>;
    labels?: Record<string, string>;
  }) =>
    ({
      Id: 'c1',
      Name: '/web-1',
      Config: { Labels: o.labels ?? { a: 'b' }, ExposedPorts: { '3000/tcp': {}, '8080/tcp': {} } },
      State: {
        Status: o.running ? 'running' : 'exited',
        Running: o.running,
        ExitCode: 3,
        StartedAt: '2026-11-28T10:00:00Z',
        FinishedAt: '0001-01-01T00:00:00Z',
        OOMKilled: false,
      },
      HostConfig: { Memory: 512 },
      NetworkSettings: { Ports: { '8080/tcp': o.bindings }, Networks: o.networks ?? { bridge: {} } },
    }) as unknown as Docker.ContainerInspectInfo;

  it('the port is the one published on publishHost; a stopped container has none and an exit code', () => {
    const bindings = [
      { HostIp: '10.0.0.1', HostPort: '1111' },
      { HostIp: '127.0.0.1', HostPort: '2222' },
    ];
    expect(containerInfoOf(inspected({ running: true, bindings }), published)).toEqual({
      engineId: 'c1',
      name: 'web-1',
      labels: { a: 'b' },
      state: 'running',
      exitCode: null,
      hostPort: 2222,
      address: { host: '127.0.0.1', port: 2222 },
      startedAt: Date.parse('2026-11-28T10:00:00Z'),
      finishedAt: null,
      memoryLimit: 512,
      oomKilled: false,
    });
    const stopped = containerInfoOf(inspected({ running: false, bindings }), published);
    expect(stopped).toMatchObject({ state: 'exited', exitCode: 3, hostPort: null, address: null });
  });

  it("on the emulator's network: reached at its alias and its own port once attached, nothing published", () => {
    // The port is the one it was made for (a label), not another the image exposes.
    const labels = { [REACH_PORT_LABEL]: '8080' };
    const networks = { 'ci-net': {} };
    const attached = containerInfoOf(inspected({ running: true, bindings: [], networks, labels }), onNetwork);
    expect(attached).toMatchObject({ hostPort: null, address: { host: 'emu-c1', port: 8080 } });
    // Not (or no longer) on the network: no address, even with a port published by someone else.
    const bindings = [{ HostIp: '127.0.0.1', HostPort: '2222' }];
    expect(containerInfoOf(inspected({ running: true, bindings, labels }), onNetwork)).toMatchObject({
      hostPort: null,
      address: null,
    });
    const o = createOptionsOf(
      { name: 'n', image: 'i', env: {}, labels: {}, publishPort: 5000, memoryBytes: 256, network: 'app-net' },
      onNetwork,
    );
    expect(o.ExposedPorts).toEqual({ '5000/tcp': {} });
    expect(o.Labels).toEqual({ [LABELS.managed]: '1', [REACH_PORT_LABEL]: '5000' });
    expect(o.HostConfig?.PortBindings).toBeUndefined();
    // The app's own network is the one of the create; the emulator's is joined after it (docker-containers.ts).
    expect(o.HostConfig?.NetworkMode).toBe('app-net');
  });

  it('addressOf: publishHost and the port by default; the alias of the engine id on the network', () => {
    const engineId = '0123456789ab'.repeat(5).slice(0, 64);
    expect(addressOf(published, { engineId, port: 32768 })).toEqual({ host: '127.0.0.1', port: 32768 });
    expect(addressOf(onNetwork, { engineId, port: 8080 })).toEqual({ host: 'emu-0123456789ab', port: 8080 });
    // Never all digits (a resolver would read it as an IPv4 number), within DNS's 63 characters.
    expect(networkAlias('1'.repeat(64))).toBe('emu-111111111111');
  });

  it('a container is labelled as the emulator’s, published on publishHost only, without swap', () => {
    const o = createOptionsOf(
      { name: 'n', image: 'i', env: { A: '1' }, labels: { x: 'y' }, publishPort: 5000, memoryBytes: 256 },
      published,
    );
    expect(o.Labels).toEqual({ x: 'y', [LABELS.managed]: '1' });
    expect(o.Env).toEqual(['A=1']);
    expect(o.HostConfig?.PortBindings).toEqual({ '5000/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] });
    expect(o.HostConfig).toMatchObject({ Memory: 256, MemorySwap: 256, Init: true });
    expect(managedFilter({ k: 'v' })).toBe(JSON.stringify({ label: [`${LABELS.managed}=1`, 'k=v'] }));
  });
});

describe('swarm-placement: where a per-container call goes', () => {
  const spec = { name: 'one-off', image: DEFAULT_STACK_IMAGE, env: {}, labels: {}, memoryBytes: 64 * 1024 * 1024 };
  const setUp = (oneOffNode?: string) => {
    const manager = new FakeRuntime();
    const other = new FakeRuntime();
    const nodes = {
      otherEngines: async () => [other],
      refresh: async () => [{ id: 'n2', hostname: 'node-2' }],
      engineOf: async (id: string) => ({ node: { id }, engine: other }),
    } as unknown as SwarmNodes;
    const tasks = {
      mustContainer: async (serviceId: string) => ({ engine: other, cid: `task-of-${serviceId}` }),
    } as unknown as SwarmTasks;
    return { manager, other, placement: createSwarmPlacement({ manager, nodes, tasks, oneOffNode }) };
  };

  it('a plain container is found on the engine that holds it, remembered once placed', async () => {
    const { manager, other, placement } = setUp();
    const there = await other.run(spec);
    expect(await placement.engineOfPlain(there.engineId)).toBe(other);
    const here = await manager.run(spec);
    placement.placed(there.engineId, manager);
    expect(await placement.engineOfPlain(there.engineId)).toBe(manager);
    placement.removed(there.engineId);
    const t = await placement.target(there.engineId);
    expect(t.engine).toBe(other);
    expect(t.cid).toBe(there.engineId);
    expect((await placement.target(here.engineId)).engine).toBe(manager);
  });

  it('a service id goes to its task container; the one-off node by hostname, or a typed error', async () => {
    const { other, placement } = setUp('node-2');
    const t = await placement.target('svc1');
    expect(t.engine).toBe(other);
    expect(t.cid).toBe('task-of-svc1');
    expect(await placement.oneOffEngine()).toBe(other);
    const noNode = setUp();
    expect(await noNode.placement.oneOffEngine()).toBe(noNode.manager);
    const missing = setUp('node-9').placement.oneOffEngine();
    await expect(missing).rejects.toBeInstanceOf(RuntimeError);
    await expect(missing).rejects.toThrow(/no swarm node is named node-9/);
  });
});
