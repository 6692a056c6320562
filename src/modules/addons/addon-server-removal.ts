// Removing addon servers: one server with its volume and the variables it set (addon deletion), an
// app's servers and network (app deletion), what Docker still holds of a deleted app (leftovers), and
// stopping every server at exit.

import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { type Logger } from '../../shared/logger.ts';
import { type VariablesStore } from '../variables/variables.store.ts';
import { type createAddonLogs } from './addon-logs.ts';
import { type AddonNetworks } from './addon-networks.ts';
import { type AddonProgress } from './addon-server-start.ts';
import { type createAddonSupervisor } from './addon-server-supervisor.ts';
import { type AddonServerRow, type AddonServersStore } from './addon-servers.store.ts';
import { removeAddonVariables } from './addon-variables.ts';

export function addonServerRemoval(o: {
  store: AddonServersStore;
  runtime: ContainerRuntime;
  logger: Logger;
  instanceId: string;
  variables: VariablesStore;
  networks: AddonNetworks;
  logs: ReturnType<typeof createAddonLogs>;
  progress: AddonProgress;
  supervisor: ReturnType<typeof createAddonSupervisor>;
}) {
  const { store, runtime, logger, instanceId, variables, networks, logs, progress, supervisor } = o;
  const { networkName } = networks;
  async function removeContainersAndVolume(row: AddonServerRow): Promise<void> {
    for (const c of await runtime.list({ [LABELS.addonId]: row.addon_id })) await runtime.remove(c.engineId);
    await runtime.removeVolume(row.container_name);
  }

  async function removeAppServers(appId: string): Promise<void> {
    for (const row of store.forApp(appId)) await removal.removeServer(row);
    await runtime
      .removeNetwork(networkName(appId))
      .catch((err: Error) => logger.warn({ err: err.message }, 'app network not removed'));
  }

  const removal = {
    /** The server, its volume and the variables it set, gone (addon deletion; the row may be gone already). */
    async removeServer(row: AddonServerRow): Promise<void> {
      const addonId = row.addon_id;
      await supervisor.pending(addonId)?.catch(() => undefined);
      // Until the row is gone: the server's `die` is the emulator's own doing, not an outage.
      await supervisor.removing(addonId, async () => {
        progress.clear(addonId);
        logs.unfollow(addonId);
        await removeContainersAndVolume(row);
        removeAddonVariables(variables, row);
        store.delete(addonId);
      });
    },

    /**
     * Everything of an app's addons, and its network, gone (app deletion, after its containers). An app that never
     * had an addon network (nor servers) needs nothing of the engine: then no promise.
     */
    removeApp(appId: string): Promise<void> | undefined {
      if (networks.neverNetworked(appId) && !store.forApp(appId).length) return undefined;
      return removeAppServers(appId);
    },

    /**
     * What Docker still holds of a deleted app's addons, found by label (the rows may be gone: a
     * control-plane reset or restore removes apps without the deletion path): servers, volumes, network.
     */
    async removeLeftovers(appId: string): Promise<void> {
      if (networks.forget(appId)) return;
      for (const c of await runtime.list({ [LABELS.owner]: instanceId, [LABELS.appId]: appId })) {
        const addonId = c.labels[LABELS.addonId];
        if (!addonId) continue;
        logs.unfollow(addonId);
        progress.clear(addonId);
        await supervisor.removing(addonId, () => runtime.remove(c.engineId));
        await runtime.removeVolume(c.name);
      }
      await runtime.removeNetwork(networkName(appId)).catch(() => undefined);
    },

    /** docker.stopContainersOnExit: every server stops (kept with its volume; `reconcile` starts it again). */
    async stopServers(): Promise<void> {
      // The emulator is exiting: these stops are its own doing, not outages to restart.
      supervisor.stop();
      const running = (await runtime.list({ [LABELS.owner]: instanceId })).filter(
        (c) => c.labels[LABELS.addonId] && c.state === 'running',
      );
      await Promise.all(
        running.map((c) =>
          runtime
            .stop(c.engineId, 10)
            .catch((err: Error) => logger.warn({ container: c.name, err: err.message }, 'addon server not stopped')),
        ),
      );
    },
  };
  return removal;
}
