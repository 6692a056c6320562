// Containers that only run to completion (build steps, postdeploy / first-deploy hooks): they carry
// the instance as `owner` and no addon id. Their work cannot outlive the emulator's process (a
// deployment cut by a stop ends `aborted` at the next start), so a stop ends them, and none is left
// once finished.
import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';

async function oneShots(runtime: ContainerRuntime, instanceId: string) {
  const owned = await runtime.list({ [LABELS.owner]: instanceId }).catch(() => []);
  return owned.filter((c) => !c.labels[LABELS.addonId]);
}

/** At a stop: the running ones are killed, so that the builds and hooks waiting on them end now. */
export async function killOneShots(runtime: ContainerRuntime, instanceId: string): Promise<void> {
  const running = (await oneShots(runtime, instanceId)).filter((c) => c.state === 'running');
  await Promise.all(running.map((c) => runtime.kill(c.engineId, 'SIGKILL').catch(() => undefined)));
}

/** Once the work that ran them has ended: every one still on the engine is removed. */
export async function removeOneShots(runtime: ContainerRuntime, instanceId: string): Promise<void> {
  const left = await oneShots(runtime, instanceId);
  await Promise.all(left.map((c) => runtime.remove(c.engineId).catch(() => undefined)));
}
