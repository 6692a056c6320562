// The app's own Docker network that its addon servers and its containers join: made once per app
// (one creation at a time per name), named after the app, removed with the app.
import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';

export function createAddonNetworks(runtime: ContainerRuntime, instanceId: string) {
  // One creation per network at once: two addons provisioned together would make two networks of one
  // name (Docker's duplicate check is not atomic), which no container can then join.
  const networks = new Map<string, Promise<void>>();
  // Apps this process created that never had a network (hence no addon container, volume or
  // network in Docker: each is made after ensureNetwork). Deleting one of them asks nothing of the
  // engine — three engine calls a deletion otherwise. Apps from before the start or from a restore
  // are not in it, so they get the full sweep.
  const unnetworked = new Set<string>();

  const networkName = (appId: string) => `scalingo-emu-${instanceId}-net-${appId.toLowerCase()}`;

  const ensureNetwork = (appId: string): Promise<void> => {
    unnetworked.delete(appId);
    const name = networkName(appId);
    let p = networks.get(name);
    if (!p) {
      p = runtime
        .ensureNetwork(name, { [LABELS.owner]: instanceId, [LABELS.appId]: appId })
        .finally(() => networks.delete(name));
      networks.set(name, p);
    }
    return p;
  };

  return {
    networkName,
    ensureNetwork,
    /** An app was just created by this process: it has nothing in Docker until its first addon server. */
    appCreated: (appId: string) => void unnetworked.add(appId),
    /** Whether the app was created by this process and never had a network. */
    neverNetworked: (appId: string) => unnetworked.has(appId),
    /** Forgets the app (deleted); whether it never had a network. */
    forget: (appId: string) => unnetworked.delete(appId),
  };
}

export type AddonNetworks = ReturnType<typeof createAddonNetworks>;
