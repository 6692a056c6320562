// What a running emulator shows of its long work: the first build of the base image and every
// deployment (bound directories, git_source apps, API deployments), through `Progress`.
import { DEFAULT_STACK_IMAGE } from '../config/schema.ts';
import { type Emulator } from '../emulator.ts';
import { type DeploymentStreamEvent, FINISHED } from '../modules/deployments/deployments.service.ts';
import { watchImageBuilds } from '../runtime/recipe-images.ts';
import { type Progress, type Task } from './progress.ts';

/** Builds the base stack image when the engine does not have it yet, with progress. */
export async function ensureBaseImageWithProgress(emu: Emulator, progress: Progress): Promise<void> {
  if (!(await emu.runtime.probe()).ok) return;
  if (await emu.runtime.imageExists(DEFAULT_STACK_IMAGE)) return;
  const task = progress.start(`Building the base image ${DEFAULT_STACK_IMAGE} (first start only)`, {
    image: DEFAULT_STACK_IMAGE,
  });
  try {
    await emu.runtime.ensureBaseImage(DEFAULT_STACK_IMAGE);
    task.done();
  } catch (err) {
    task.fail((err as Error).message);
  }
}

/** Shows each deployment from queued to its end; returns the unsubscribe function. */
export function followDeployments(emu: Emulator, progress: Progress): () => void {
  const tasks = new Map<string, Task>();
  const onEvent = (e: DeploymentStreamEvent) => {
    const appName = emu.area('apps').apps.find(e.appId)?.name ?? e.appId;
    if (e.type === 'new') {
      tasks.set(e.deploymentId, progress.start(`Deploying ${appName}`, { app: appName, deployment: e.deploymentId }));
      return;
    }
    const task = tasks.get(e.deploymentId);
    if (!task) return;
    if (e.type === 'log') {
      const last = String(e.data.content ?? '')
        .trim()
        .split('\n')
        .pop();
      if (last) task.update(last.replace(/^-----> |^!\s+/, ''));
      return;
    }
    const status = String(e.data.status);
    if (!FINISHED.has(status)) return task.update(status);
    tasks.delete(e.deploymentId);
    if (status === 'success') task.done(`deployed, http://${appName}.localhost:${emu.urls.routerPort}`);
    else task.fail(`${status} (GET ${emu.urls.api}/v1/apps/${appName}/deployments/${e.deploymentId}/output)`);
  };
  emu.area('containers').deployments.bus.on('event', onEvent);
  return () => void emu.area('containers').deployments.bus.off('event', onEvent);
}

/** Shows each image the emulator builds on first use (a stack or an addon server); returns the unsubscribe function. */
export function followImageBuilds(progress: Progress): () => void {
  const tasks = new Map<string, Task>();
  return watchImageBuilds((e) => {
    const tag = e.recipe.tag;
    if (e.phase === 'start')
      return void tasks.set(tag, progress.start(`Building the ${e.recipe.title} image (first use)`, { image: tag }));
    const task = tasks.get(tag);
    if (!task) return;
    if (e.phase === 'line') return task.update(e.line);
    tasks.delete(tag);
    if (e.phase === 'done') task.done(`${tag}, ${e.seconds} s`);
    else task.fail(e.error);
  });
}
