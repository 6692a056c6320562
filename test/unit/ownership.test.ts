import { describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { isOwnedBy, type RemovedKind, removingOnlyOwned } from '../../src/runtime/ownership.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { FakeRuntime } from '../support/fake-runtime.ts';

// The removal check of src/runtime/ownership.ts over the in-memory runtime: what this instance made goes, the rest
// stays (test/docker/foreign-objects.test.ts proves it on the engine with a snapshot naming foreign objects).
const ME = 'a1b2c3d4';

function subject() {
  const engine = new FakeRuntime();
  const refused: [RemovedKind, string][] = [];
  const rt = removingOnlyOwned(engine, ME, (kind, name) => refused.push([kind, name]));
  return { engine, rt, refused };
}

const spec = (name: string, labels: Record<string, string>, binds?: string[]) => ({
  name,
  image: DEFAULT_STACK_IMAGE,
  env: {},
  labels,
  memoryBytes: 1 << 26,
  binds,
});

describe('removals reach only what this instance made', () => {
  it('owned: managed, and this instance where that kind of object names its maker', () => {
    expect(isOwnedBy({ [LABELS.managed]: '1', [LABELS.instance]: ME }, ME, 'container')).toBe(true);
    expect(isOwnedBy({ [LABELS.managed]: '1', [LABELS.owner]: ME }, ME, 'volume')).toBe(true);
    expect(isOwnedBy({ [LABELS.managed]: '1', [LABELS.builtBy]: ME }, ME, 'image')).toBe(true);
    // A container run from one of its images inherits built-by: not this instance's container for that.
    expect(isOwnedBy({ [LABELS.managed]: '1', [LABELS.builtBy]: ME }, ME, 'container')).toBe(false);
    expect(isOwnedBy({ [LABELS.instance]: ME }, ME, 'container')).toBe(false);
    expect(isOwnedBy({ [LABELS.managed]: '1', [LABELS.instance]: 'other' }, ME, 'image')).toBe(false);
    expect(isOwnedBy({ [LABELS.managed]: '1', [LABELS.owner]: '' }, '', 'network')).toBe(false);
    expect(isOwnedBy(null, ME, 'volume')).toBe(false);
  });

  it('containers and their volumes: its own go, another instance’s stay and are reported', async () => {
    const { engine, rt, refused } = subject();
    const mine = await rt.run(spec('mine', { [LABELS.owner]: ME, [LABELS.addonId]: 'ad-1' }, ['vol-mine:/data']));
    const theirs = await rt.run(spec('theirs', { [LABELS.owner]: 'other', [LABELS.addonId]: 'ad-1' }, ['vol-x:/d']));
    engine.volumes.set('vol-unlabelled', {});
    await rt.remove(mine.engineId);
    await rt.remove(theirs.engineId);
    for (const v of ['vol-mine', 'vol-x', 'vol-unlabelled', 'vol-missing']) await rt.removeVolume(v);
    expect(engine.containers.has(mine.engineId)).toBe(false);
    expect(engine.containers.has(theirs.engineId)).toBe(true);
    expect([...engine.volumes.keys()].sort()).toEqual(['vol-unlabelled', 'vol-x']);
    expect(refused).toEqual([
      ['container', 'theirs'],
      ['volume', 'vol-x'],
      ['volume', 'vol-unlabelled'],
    ]);
  });

  it('images it builds or commits carry this instance, and only those are removed', async () => {
    const { engine, rt, refused } = subject();
    await rt.buildImage({ contextDir: '/nowhere', tag: 'built:1', labels: {} });
    const build = await rt.run(spec('build', { [LABELS.owner]: ME }));
    await rt.commit(build.engineId, { tag: 'layer:1', changes: [`LABEL ${LABELS.owner}=""`] });
    engine.images.set('foreign:1', { [LABELS.managed]: '1', [LABELS.instance]: 'other' });
    for (const tag of ['built:1', 'layer:1', 'foreign:1', DEFAULT_STACK_IMAGE]) await rt.removeImage(tag);
    expect([...engine.images.keys()].sort()).toEqual(['foreign:1', DEFAULT_STACK_IMAGE]);
    expect(refused).toEqual([
      ['image', 'foreign:1'],
      ['image', DEFAULT_STACK_IMAGE],
    ]);
  });

  it('networks: its own go, others stay', async () => {
    const { engine, rt, refused } = subject();
    await rt.ensureNetwork('net-mine', { [LABELS.owner]: ME });
    await rt.ensureNetwork('net-theirs', { [LABELS.owner]: 'other' });
    await rt.removeNetwork('net-mine');
    await rt.removeNetwork('net-theirs');
    expect([...engine.networks.keys()]).toEqual(['net-theirs']);
    expect(refused).toEqual([['network', 'net-theirs']]);
  });
});
