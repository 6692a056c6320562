import { describe, expect, it } from 'vitest';
import { createRunningContainers } from '../../src/modules/stats/sampler.ts';
import { type ContainerInfo, LABELS } from '../../src/runtime/runtime.ts';
import { FakeStatsRuntime } from '../support/fake-stats-runtime.ts';

// The sampler's rounds list the engine's containers once a round and inspect only those never seen (issue 40: 200
// inspects a minute with 200 containers). What a round hands on must stay what a fresh inspect of each gives.

class CountingRuntime extends FakeStatsRuntime {
  readonly inspected: string[] = [];
  override async inspect(engineId: string): Promise<ContainerInfo | null> {
    this.inspected.push(engineId);
    return super.inspect(engineId);
  }
}

const identities = (cs: { info: ContainerInfo; appId: string; type: string; index: number }[]) =>
  cs.map((c) => `${c.appId} ${c.type}-${c.index} ${c.info.engineId.slice(0, 8)} ${c.info.memoryLimit}`).sort();

describe('the sampler’s running containers', () => {
  it('inspects a container once, however many rounds; new ones are inspected, gone and stopped ones left out', async () => {
    const rt = new CountingRuntime();
    const web1 = rt.add({ instanceId: 'me', appId: 'app-1', type: 'web', index: 1 });
    const web2 = rt.add({ instanceId: 'me', appId: 'app-1', type: 'web', index: 2 });
    // Another emulator's container on the same engine, and one that is not running: never sampled.
    rt.add({ instanceId: 'someone-else', appId: 'app-1', type: 'web', index: 9 });
    rt.add({ instanceId: 'me', appId: 'app-2', type: 'worker', index: 1, running: false });
    const running = createRunningContainers(rt, 'me', 4);

    const first = await running();
    // Only what runs is inspected: not the created one, not the other instance's.
    expect([...rt.inspected].sort()).toEqual([web1, web2].sort());
    expect(identities(first)).toEqual(
      identities(
        (await Promise.all([web1, web2].map((id) => rt.inspect(id)))).map((info) => ({
          info: info!,
          appId: 'app-1',
          type: 'web',
          index: Number(info!.labels[LABELS.index]),
        })),
      ),
    );
    rt.inspected.length = 0;

    expect(identities(await running())).toEqual(identities(first));
    expect(rt.inspected).toEqual([]);

    // A new container is inspected in the round that first lists it; a gone one is no longer handed on.
    const worker = rt.add({ instanceId: 'me', appId: 'app-2', type: 'worker', index: 2 });
    rt.destroy(web2);
    const third = await running();
    expect(third.map((c) => c.info.engineId).sort()).toEqual([web1, worker].sort());
    expect(rt.inspected).toEqual([worker]);

    // A container that stops is left out while it is stopped, and comes back without another inspect.
    rt.exit(web1);
    expect((await running()).map((c) => c.info.engineId)).toEqual([worker]);
    rt.restart(web1);
    rt.inspected.length = 0;
    expect((await running()).map((c) => c.info.engineId).sort()).toEqual([web1, worker].sort());
    expect(rt.inspected).toEqual([]);
  });

  it('a container of this instance without an app identity (an addon server) is inspected once and never sampled', async () => {
    const rt = new CountingRuntime();
    const server = rt.add({ instanceId: 'me', appId: 'app-1', type: 'web', index: 1 });
    // The fake's containers are apps' containers: take its identity labels away, as an addon server has none.
    const info = rt.containers.get(server)!.info;
    delete info.labels[LABELS.type];
    delete info.labels[LABELS.index];
    const running = createRunningContainers(rt, 'me', 4);
    expect(await running()).toEqual([]);
    expect(await running()).toEqual([]);
    expect(rt.inspected).toEqual([server]);
  });

  it('a container whose inspect fails is not remembered: the next round inspects it again', async () => {
    const rt = new CountingRuntime();
    const web = rt.add({ instanceId: 'me', appId: 'app-1', type: 'web', index: 1 });
    const inspect = rt.inspect.bind(rt);
    let failing = true;
    rt.inspect = async (id: string) => {
      if (failing) {
        rt.inspected.push(id);
        throw new Error('engine busy');
      }
      return inspect(id);
    };
    const running = createRunningContainers(rt, 'me', 4);
    expect(await running()).toEqual([]);
    failing = false;
    expect((await running()).map((c) => c.info.engineId)).toEqual([web]);
    expect(rt.inspected).toEqual([web, web]);
  });
});
