// The swarm runtime's mapping of a ContainerSpec onto a service, and of a service and its newest task
// back onto a ContainerInfo (pure functions of src/runtime/swarm-services.ts; the runtime itself is
// tested on a real swarm in test/docker/swarm-runtime.docker.test.ts).

import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { DOOR_PORTS, pickPort, portFree, SERVICE_PORTS } from '../../src/runtime/swarm-ports.ts';
import {
  newestTask,
  SWARM_LABELS,
  type SwarmService,
  type SwarmTask,
  serviceInfo,
  serviceName,
  serviceSpec,
  taskState,
} from '../../src/runtime/swarm-services.ts';

const MiB = 1024 * 1024;
const task = (id: string, createdAt: string, state: string, extra: Partial<SwarmTask['Status']> = {}): SwarmTask => ({
  ID: id,
  ServiceID: 's1',
  CreatedAt: createdAt,
  DesiredState: 'running',
  Status: { State: state, Timestamp: createdAt, ...extra },
});

describe('swarm services', () => {
  it('names: kept when Swarm accepts them, else shortened with a hash of the full name (63 characters at most)', () => {
    expect(serviceName('scalingo-emu-ab12cd34-app-web-1-x9z')).toBe('scalingo-emu-ab12cd34-app-web-1-x9z');
    const long = `scalingo-emu-ab12cd34-${'a'.repeat(48)}-web-12-x9z`;
    const short = serviceName(long);
    expect(short).toHaveLength(63);
    expect(short).toMatch(/^scalingo-emu-ab12cd34-a+-[0-9a-f]{8}$/);
    expect(serviceName(`${long}b`)).not.toBe(short);
  });

  it('a spec becomes one replica (or none until started), image by id, memory limit, no restart, host-mode port, dnsrr', () => {
    const spec = serviceSpec(
      {
        name: 'web-1',
        image: 'scalingo-emulator/stack-busybox:1',
        cmd: ['sh', '-c', 'httpd'],
        env: { PORT: '5000' },
        labels: { [LABELS.type]: 'web', [LABELS.owner]: 'i1' },
        memoryBytes: 512 * MiB,
        publishPort: 5000,
        network: 'net',
        networkAliases: ['pg'],
        binds: ['vol:/data', '/cache:/cache:ro'],
      },
      'sha256:abc',
      { replicas: 0, constraints: ['node.id==n1'] },
    );
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 0 } });
    expect(spec.Labels).toMatchObject({
      [LABELS.type]: 'web',
      [LABELS.managed]: '1',
      [SWARM_LABELS.image]: 'scalingo-emulator/stack-busybox:1',
    });
    expect(spec.TaskTemplate.ContainerSpec).toMatchObject({
      Image: 'sha256:abc',
      Args: ['sh', '-c', 'httpd'],
      Env: ['PORT=5000'],
      Init: true,
      Labels: { [LABELS.managed]: '1', [LABELS.type]: 'web' },
    });
    expect(spec.TaskTemplate.ContainerSpec.Mounts).toEqual([
      // A volume the node makes carries the owner, which removals check (src/runtime/ownership.ts).
      {
        Type: 'volume',
        Source: 'vol',
        Target: '/data',
        ReadOnly: false,
        VolumeOptions: { Labels: { [LABELS.managed]: '1', [LABELS.owner]: 'i1' } },
      },
      { Type: 'bind', Source: '/cache', Target: '/cache', ReadOnly: true },
    ]);
    expect(spec.TaskTemplate.Resources).toEqual({ Limits: { MemoryBytes: 512 * MiB } });
    expect(spec.TaskTemplate.RestartPolicy).toEqual({ Condition: 'none' });
    expect(spec.TaskTemplate.Placement).toEqual({ Constraints: ['node.id==n1'] });
    expect(spec.TaskTemplate.Networks).toEqual([{ Target: 'net', Aliases: ['pg'] }]);
    expect(spec.EndpointSpec).toEqual({
      Mode: 'dnsrr',
      Ports: [{ Protocol: 'tcp', TargetPort: 5000, PublishMode: 'host' }],
    });
  });

  it('the newest task stands for the container: created before it runs, exited after, with its exit code', () => {
    const old = task('t1', '2026-01-01T00:00:00Z', 'failed', { ContainerStatus: { ExitCode: 1 } });
    const now = task('t2', '2026-01-01T00:01:00Z', 'complete', { ContainerStatus: { ExitCode: 0 } });
    expect(newestTask([now, old])?.ID).toBe('t2');
    expect(newestTask([])).toBeNull();
    expect(
      [null, 'pending', 'assigned', 'preparing', 'starting'].map((s) =>
        taskState(s ? task('t', '2026-01-01T00:00:00Z', s) : null),
      ),
    ).toEqual(Array(5).fill('created'));
    expect(
      ['complete', 'failed', 'shutdown', 'rejected', 'orphaned'].map((s) =>
        taskState(task('t', '2026-01-01T00:00:00Z', s)),
      ),
    ).toEqual(Array(5).fill('exited'));
    const s: SwarmService = {
      ID: 's1',
      Version: { Index: 3 },
      Spec: serviceSpec({ name: 'n', image: 'i', env: {}, labels: {}, memoryBytes: 64 * MiB }, 'sha256:i', {
        replicas: 1,
        constraints: [],
      }),
    };
    expect(serviceInfo(s, old)).toMatchObject({
      engineId: 's1',
      name: 'n',
      state: 'exited',
      exitCode: 1,
      memoryLimit: 64 * MiB,
      hostPort: null,
    });
    expect(serviceInfo(s, null)).toMatchObject({ state: 'created', exitCode: null, startedAt: null });
    // updateMemory's in-place change is read from the service's label.
    s.Spec.Labels[SWARM_LABELS.memory] = String(128 * MiB);
    expect(serviceInfo(s, null).memoryLimit).toBe(128 * MiB);
  });
});

describe('docker.mode (configuration)', () => {
  it('local by default; swarm with an optional one-off node; anything else refused, naming the key', () => {
    expect(loadConfig({ ignoreDefaultFile: true, env: {} }).docker).toMatchObject({ mode: 'local', swarm: {} });
    const swarm = loadConfig({
      ignoreDefaultFile: true,
      env: {},
      overrides: { docker: { mode: 'swarm', swarm: { oneOffNode: 'node-2' } } },
    });
    expect(swarm.docker).toMatchObject({ mode: 'swarm', swarm: { oneOffNode: 'node-2' } });
    const fromEnv = loadConfig({
      ignoreDefaultFile: true,
      env: { EMULATOR_DOCKER_MODE: 'swarm', EMULATOR_DOCKER_ONE_OFF_NODE: 'n2' },
    });
    expect(fromEnv.docker).toMatchObject({ mode: 'swarm', swarm: { oneOffNode: 'n2' } });
    expect(() =>
      loadConfig({ ignoreDefaultFile: true, env: {}, overrides: { docker: { mode: 'kubernetes' } } as never }),
    ).toThrow(/docker\.mode/);
    expect(() =>
      loadConfig({
        ignoreDefaultFile: true,
        env: {},
        overrides: { docker: { mode: 'swarm', swarm: { oneOffNode: '' } } },
      }),
    ).toThrow(/docker\.swarm\.oneOffNode/);
  });
});

describe('ports the swarm runtime chooses', () => {
  it('below the kernel ephemeral range (where Docker allocates), services and doors apart; used and taken ports skipped', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    expect(SERVICE_PORTS.last).toBeLessThan(DOOR_PORTS.first);
    expect(DOOR_PORTS.last).toBe(low - 1);
    const taken = createServer();
    await new Promise<void>((ok) => taken.listen(DOOR_PORTS.first, '127.0.0.1', ok));
    const one = { first: DOOR_PORTS.first, last: DOOR_PORTS.first + 2 };
    expect(await portFree(DOOR_PORTS.first, '127.0.0.1')).toBe(false);
    expect(await pickPort(one, new Set([DOOR_PORTS.first + 1]), '127.0.0.1')).toBe(DOOR_PORTS.first + 2);
    await expect(pickPort(one, new Set([DOOR_PORTS.first + 1, DOOR_PORTS.first + 2]), '127.0.0.1')).rejects.toThrow(
      /no free port left/,
    );
    await new Promise((ok) => taken.close(ok));
  });
});
