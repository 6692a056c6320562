// The postdeploy hook (Procfile `postdeploy:`) and the manifest's first-deploy script: a container of
// the new image with the app's environment and network (its addons answer), run to its end. Its
// output is handed on line by line; the exit code decides the deployment (doc.scalingo.com/platform/app/postdeploy-hook).
import { type ContainerSize } from '../../config/schema.ts';
import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { secret } from '../../shared/ids.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { containerEnv } from './container-env.ts';
import { type Release } from './orchestrator.ts';

export interface DeployHookDeps {
  runtime: ContainerRuntime;
  instanceId: string;
  appEnv: (appId: string) => Record<string, string>;
  networkOf: (appId: string) => string | undefined;
  /** The platform runs the hook in an M container. */
  size: ContainerSize;
  /** The platform stops a hook after 20 minutes (status -128). */
  maxRunMs: number;
}

export type DeployHookRunner = (
  app: AppRow,
  rel: Release,
  name: string,
  command: string,
  onLine: (line: string) => void,
) => Promise<number>;

export function createDeployHookRunner(deps: DeployHookDeps): DeployHookRunner {
  const { runtime } = deps;
  return async (app, rel, name, command, onLine) => {
    const info = await runtime.run({
      name: `scalingo-emu-${deps.instanceId}-${app.name}-${name}-${secret(3)
        .toLowerCase()
        .replace(/[^a-z0-9]/g, 'x')}`,
      image: rel.image,
      cmd: ['sh', '-c', command],
      env: containerEnv({
        appName: app.name,
        type: name,
        index: 1,
        size: deps.size,
        stack: app.stack_id,
        version: rel.deploymentId,
        appVariables: deps.appEnv(app.id),
        extra: { CONTAINER: name },
      }),
      // `owner`, not `instance`: the reconciler leaves it alone and the logs collector does not follow it (its lines come from here).
      // The release image carries `instance` (a label of the build): emptied here, or the container would inherit it
      // and every hook line would reach the app's logs twice.
      labels: {
        [LABELS.managed]: '1',
        [LABELS.instance]: '',
        [LABELS.owner]: deps.instanceId,
        [LABELS.appId]: app.id,
        [LABELS.appName]: app.name,
        [LABELS.type]: name,
      },
      memoryBytes: deps.size.memory,
      network: deps.networkOf(app.id),
    });
    const timer = setTimeout(() => void runtime.kill(info.engineId, 'SIGKILL').catch(() => undefined), deps.maxRunMs);
    try {
      const logs = await runtime.logs(info.engineId, { follow: true });
      const reading = (async () => {
        for await (const l of logs) onLine(l.text);
      })().catch(() => undefined);
      const code = await runtime.wait(info.engineId);
      await Promise.race([reading, new Promise((ok) => setTimeout(ok, 2000))]);
      logs.close();
      return code;
    } finally {
      clearTimeout(timer);
      await runtime.remove(info.engineId).catch(() => undefined);
    }
  };
}
