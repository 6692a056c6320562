import { describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { createAddonNetworks } from '../../src/modules/addons/addon-networks.ts';
import { type AddonProgress } from '../../src/modules/addons/addon-server-start.ts';
import { createAddonSupervisor } from '../../src/modules/addons/addon-server-supervisor.ts';
import { type AddonServerRow, type AddonServersStore } from '../../src/modules/addons/addon-servers.store.ts';
import { newServerRow } from '../../src/modules/addons/addon-servers.ts';
import { type AddonRow } from '../../src/modules/addons/addons.store.ts';
import { type AppRow } from '../../src/modules/apps/apps.store.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeRuntime } from '../support/fake-runtime.ts';

// Parts of the addon servers on their own, over the in-memory runtime (real servers: test/docker/addon-*.test.ts).

describe('addon-networks', () => {
  it('two addons provisioned together make one network; an app created here asks nothing until then', async () => {
    const runtime = new FakeRuntime();
    let creations = 0;
    const ensure = runtime.ensureNetwork.bind(runtime);
    runtime.ensureNetwork = async (name, labels) => {
      creations++;
      await ensure(name, labels);
    };
    const networks = createAddonNetworks(runtime, 'inst1');
    networks.appCreated('app-A');
    expect(networks.neverNetworked('app-A')).toBe(true);
    await Promise.all([networks.ensureNetwork('app-A'), networks.ensureNetwork('app-A')]);
    expect(creations).toBe(1);
    expect(networks.neverNetworked('app-A')).toBe(false);
    expect(runtime.networks.get('scalingo-emu-inst1-net-app-a')).toMatchObject({
      [LABELS.owner]: 'inst1',
      [LABELS.appId]: 'app-A',
    });
    networks.appCreated('app-B');
    expect(networks.forget('app-B')).toBe(true);
    expect(networks.forget('app-B')).toBe(false);
  });
});

describe('addon-server-supervisor', () => {
  const row = { addon_id: 'ad-1', app_id: 'app-1', kind: 'redis' } as AddonServerRow;
  const setUp = () => {
    const runtime = new FakeRuntime();
    const statuses: string[] = [];
    const starts: string[] = [];
    const store = { byAddon: (id: string) => (id === row.addon_id ? row : undefined) } as unknown as AddonServersStore;
    const progress = { note: () => undefined, message: () => undefined, clear: () => undefined } as AddonProgress;
    const supervisor = createAddonSupervisor({
      store,
      runtime,
      logger: createLogger('silent'),
      instanceId: 'inst1',
      progress,
      startServer: async (r) => void starts.push(r.addon_id),
      setStatus: (_id, s) => void statuses.push(s),
    });
    const server = () =>
      runtime.run({
        name: 'server',
        image: DEFAULT_STACK_IMAGE,
        // Runs until killed (the in-memory runtime's scripted `httpd`).
        cmd: ['sh', '-c', 'httpd -f'],
        env: {},
        memoryBytes: 64 * 1024 * 1024,
        labels: { [LABELS.owner]: 'inst1', [LABELS.addonId]: row.addon_id },
      });
    return { runtime, statuses, starts, supervisor, server };
  };

  it('a server that dies unasked is started again: provisioning, then running', async () => {
    const { runtime, statuses, starts, supervisor, server } = setUp();
    const c = await server();
    await runtime.kill(c.engineId, 'SIGKILL');
    await eventually(() => statuses.includes('running'), { what: 'the server brought up again' });
    expect(statuses).toEqual(['provisioning', 'running']);
    expect(starts).toEqual(['ad-1']);
    supervisor.stop();
  });

  it('a die while the emulator removes the server, or after stop, is its own doing', async () => {
    const { runtime, statuses, supervisor, server } = setUp();
    const c = await server();
    await supervisor.removing(row.addon_id, () => runtime.kill(c.engineId, 'SIGKILL'));
    const d = await runtime.start(c.engineId);
    supervisor.stop();
    await runtime.kill(d.engineId, 'SIGKILL');
    await supervisor.idle();
    expect(statuses).toEqual([]);
  });
});

describe('newServerRow', () => {
  it('names the container, alias, database and user after the addon; the plan gives the memory; a fresh password', () => {
    const addon = { id: 'ad-0123456789ab', provider_id: 'scalingo-postgresql', resource_id: 'My-App.4567' } as AddonRow;
    const app = { id: 'app-1' } as AppRow;
    const row = newServerRow(addon, app, 'postgresql-starter-512', 'inst1', 1000);
    expect(row).toMatchObject({
      addon_id: 'ad-0123456789ab',
      app_id: 'app-1',
      kind: 'postgresql',
      container_name: 'scalingo-emu-inst1-addon-postgresql-01234567',
      alias: 'postgresql-01234567',
      username: 'my_app_4567',
      database: 'my_app_4567',
      memory_bytes: 512 * 1024 * 1024,
      variables: '[]',
      created_at: 1000,
    });
    expect(row.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(newServerRow(addon, app, 'postgresql-starter-512', 'inst1', 1000).password).not.toBe(row.password);
  });
});
