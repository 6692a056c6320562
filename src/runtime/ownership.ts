// What an emulator instance may remove from the engine: only what carries its own labels, checked on the engine
// at removal time. The database names containers, images and volumes, and a database can come from elsewhere (an
// imported snapshot, a colleague's file): a name in it is no proof of ownership (issue 37). The composition root
// wraps the runtime once (src/wiring/state.ts), so every area's removals go through the check.
import { type ContainerRuntime, LABELS } from './runtime.ts';

export type RemovedKind = 'container' | 'image' | 'volume' | 'network';

// Where each kind of object names the instance that made it: `instance` on app containers and their images, `owner` on
// build, addon and hook containers and on networks and volumes, `built-by` on images. A container run from one of this
// instance's images inherits `built-by`: that alone does not make it this instance's.
const OWNER_KEYS: Record<RemovedKind, string[]> = {
  container: [LABELS.instance, LABELS.owner],
  image: [LABELS.instance, LABELS.builtBy],
  volume: [LABELS.instance, LABELS.owner],
  network: [LABELS.instance, LABELS.owner],
};

/** Managed by an emulator, and made by this instance. */
export function isOwnedBy(labels: Record<string, string> | null, instanceId: string, kind: RemovedKind): boolean {
  if (!labels || !instanceId) return false;
  return labels[LABELS.managed] === '1' && OWNER_KEYS[kind].some((key) => labels[key] === instanceId);
}

/** The labels a named volume made for a container carries: the container's ownership, so removals can check it. */
export function volumeLabelsFor(containerLabels: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = { [LABELS.managed]: '1' };
  for (const key of [LABELS.instance, LABELS.owner, LABELS.appId, LABELS.addonId])
    if (containerLabels[key]) kept[key] = containerLabels[key];
  return kept;
}

/** The named volumes of `source:target[:ro]` binds (a source that is not a path). */
export const namedVolumes = (binds: string[] | undefined): string[] =>
  (binds ?? []).map((b) => b.split(':')[0]).filter((source) => source && !source.startsWith('/'));

/**
 * The runtime whose removals only reach this instance's objects (anything else is left alone and reported to
 * `onRefused`), and whose images carry the instance that built them.
 */
export function removingOnlyOwned(
  runtime: ContainerRuntime,
  instanceId: string,
  onRefused: (kind: RemovedKind, name: string) => void,
): ContainerRuntime {
  const stamp = { [LABELS.managed]: '1', [LABELS.builtBy]: instanceId };
  const overrides: Partial<ContainerRuntime> = {
    async remove(engineId) {
      const info = await runtime.inspect(engineId);
      if (!info) return; // gone already: removing a missing container is no error
      if (isOwnedBy(info.labels, instanceId, 'container')) return runtime.remove(engineId);
      onRefused('container', info.name);
    },
    async removeImage(tag) {
      const labels = await runtime.imageLabels(tag);
      if (!labels) return;
      if (isOwnedBy(labels, instanceId, 'image')) return runtime.removeImage(tag);
      onRefused('image', tag);
    },
    async removeVolume(name) {
      const labels = await runtime.volumeLabels(name);
      if (!labels) return;
      if (isOwnedBy(labels, instanceId, 'volume')) return runtime.removeVolume(name);
      onRefused('volume', name);
    },
    async removeNetwork(name) {
      const labels = await runtime.networkLabels(name);
      if (!labels) return;
      if (isOwnedBy(labels, instanceId, 'network')) return runtime.removeNetwork(name);
      onRefused('network', name);
    },
    buildImage: (o) => runtime.buildImage({ ...o, labels: { ...o.labels, ...stamp } }),
    layerImage: (o) =>
      runtime.layerImage({ ...o, labels: { ...o.labels, [LABELS.managed]: '1', [LABELS.builtBy]: instanceId } }),
    commit: (engineId, o) =>
      runtime.commit(engineId, {
        ...o,
        changes: [...o.changes, `LABEL ${LABELS.managed}="1" ${LABELS.builtBy}="${instanceId}"`],
      }),
  };
  const bound = new Map<PropertyKey, unknown>();
  // A proxy, so runtimes written as classes (tests' fakes) keep their other members as they are.
  return new Proxy(runtime, {
    get(target, key, receiver) {
      const own = overrides[key as keyof ContainerRuntime];
      if (own) return own;
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      let fn = bound.get(key);
      if (!fn) bound.set(key, (fn = value.bind(target)));
      return fn;
    },
  });
}
