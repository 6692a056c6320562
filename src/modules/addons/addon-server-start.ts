// Starting one addon server: its kind's image (built on first use), the app's network, the container
// (created on the server's volume, or the existing one started) and the wait until it answers.

import { findRecipe } from '../../runtime/image-recipes.ts';
import { ensureRecipeImage } from '../../runtime/recipe-images.ts';
import { type ImageSource } from '../../runtime/registry-images.ts';
import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { type Clock } from '../../shared/clock.ts';
import { defined } from '../../shared/defined.ts';
import { ADDON_KINDS, type AddonKind } from './addon-kinds.ts';
import { type createAddonLogs } from './addon-logs.ts';
import { type AddonNetworks } from './addon-networks.ts';
import { serverEnv } from './addon-server-exec.ts';
import { type AddonServerRow } from './addon-servers.store.ts';

const READY_TIMEOUT_MS = 180_000;

type AddonLogs = ReturnType<typeof createAddonLogs>;

/**
 * What an addon that is not running is doing or why it failed: its status message (the addon's
 * JSON while provisioning or in error) and a line in its logs, where `logs --addon` shows it.
 */
export function createAddonProgress(logs: AddonLogs) {
  const messages = new Map<string, string>();
  return {
    note(row: AddonServerRow, text: string): void {
      messages.set(row.addon_id, text);
      logs.note(row.addon_id, row.app_id, text);
    },
    message: (addonId: string): string | undefined => messages.get(addonId),
    clear: (addonId: string) => void messages.delete(addonId),
  };
}

export type AddonProgress = ReturnType<typeof createAddonProgress>;

export function addonServerLabels(row: AddonServerRow, instanceId: string): Record<string, string> {
  return {
    [LABELS.owner]: instanceId,
    [LABELS.appId]: row.app_id,
    [LABELS.addonId]: row.addon_id,
    [LABELS.type]: `addon-${row.kind}`,
  };
}

export function createServerStarter(o: {
  runtime: ContainerRuntime;
  clock: Clock;
  instanceId: string;
  /** `images.source`: where the server's image comes from when the engine lacks it. */
  imageSource?: ImageSource;
  networks: AddonNetworks;
  logs: AddonLogs;
  progress: AddonProgress;
}) {
  const { runtime, networks, logs, progress } = o;

  /** Creates (or re-creates, on the same volume) the server container and waits until it answers. */
  return async function startServer(row: AddonServerRow): Promise<void> {
    const spec = ADDON_KINDS[row.kind as AddonKind];
    const recipe = defined(findRecipe(spec.recipe), `recipe ${spec.recipe}`);
    // The app's containers join this network as soon as the addon exists: make it before a long image build.
    await networks.ensureNetwork(row.app_id);
    await ensureRecipeImage(runtime, recipe, {
      source: o.imageSource,
      onStart: (r) =>
        progress.note(
          row,
          `building the ${r.title} image (first use): the addon is provisioning until it is built and the server answers`,
        ),
      onLine: (l) => logs.note(row.addon_id, row.app_id, `[image] ${l}`),
    });
    progress.note(row, `starting the ${row.kind} server ${row.container_name}`);
    const existing = (await runtime.list({ [LABELS.addonId]: row.addon_id }))[0];
    let engineId: string;
    if (!existing) {
      const info = await runtime.run({
        name: row.container_name,
        image: recipe.tag,
        cmd: ['sh', '-c', spec.script(row.memory_bytes)],
        env: serverEnv(row),
        labels: addonServerLabels(row, o.instanceId),
        memoryBytes: row.memory_bytes,
        publishPort: spec.port,
        network: networks.networkName(row.app_id),
        networkAliases: [row.alias],
        binds: [`${row.container_name}:${spec.dataDir}`],
      });
      engineId = info.engineId;
    } else {
      engineId = existing.engineId;
      if (existing.state !== 'running') await runtime.start(existing.engineId);
    }
    logs.follow(row.addon_id, row.app_id, engineId);
    const deadline = o.clock.now() + READY_TIMEOUT_MS;
    for (;;) {
      const r = await runtime.exec(engineId, spec.ready, { env: serverEnv(row) }).catch(() => ({ exitCode: -1 }));
      if (r.exitCode === 0) break;
      const info = await runtime.inspect(engineId);
      if (info?.state !== 'running')
        throw new Error(`the ${row.kind} server stopped (exit code ${info?.exitCode ?? '?'})`);
      if (o.clock.now() > deadline)
        throw new Error(`the ${row.kind} server did not answer within ${READY_TIMEOUT_MS / 1000} s`);
      await new Promise((ok) => setTimeout(ok, 300));
    }
    progress.clear(row.addon_id);
    logs.note(row.addon_id, row.app_id, `${row.kind} server ${row.container_name} ready`);
  };
}
