import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ImageSource } from '../../runtime/registry-images.ts';
import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { objectId } from '../../shared/ids.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type ContainersStore } from '../containers/containers.store.ts';
import { missingNetworkHint, OFFLINE_BUILDS, watchOfflineBuild } from './build-network.ts';
import { detectBuildpack } from './buildpacks.ts';
import { parseProcfile } from './procfile.ts';
import { buildpackBuild } from './slug-build.ts';

export interface BuildReleaseDeps {
  runtime: ContainerRuntime;
  instanceId: string;
  stacks: Record<string, string>;
  baseImage: string;
  /** Buildpack-like builds (issue #15): the app's build cache dir; absent = Procfile-only builds. */
  buildCacheDir?: (appId: string) => string;
  /** The app's environment variables, which the buildpack-like build sees (as the platform's builds do). */
  appEnv?: (appId: string) => Record<string, string>;
  /** `images.source`: where the stack image comes from when the engine lacks it. */
  imageSource?: ImageSource;
  /** The network of buildpack-like build steps (`builds.network`: none, bridge or a network's name); default none. */
  buildNetwork?: string;
  /** Aborted when the emulator stops (the shutdown gate's): work on the host under way ends. */
  stopping?: AbortSignal;
  /** Reads more of the code than the Procfile (cron.json); throwing fails the build with the message. */
  onCode?: (appId: string, deploymentId: string, codeDir: string) => void;
}

/** A built image: its tag and process types (the postdeploy entry apart, as the hook). */
export interface BuiltRelease {
  tag: string;
  processTypes: Record<string, string>;
  hook: { name: string; command: string } | null;
}

/**
 * Builds the image of a deployment from its extracted code, choosing as the platform does: code a
 * buildpack detects (package.json, requirements.txt, Gemfile…) is built buildpack-like whatever else
 * it holds, a Dockerfile included; a Dockerfile is built (`docker build`) only where no buildpack
 * applies, a convenience the platform does not have; otherwise the app's stack image with the code
 * copied in and the Procfile's types. A failure is thrown with `status: 'build-error'`.
 */
export async function buildRelease(
  deps: BuildReleaseDeps,
  app: AppRow,
  deploymentId: string,
  context: string,
  deployedBefore: boolean,
  say: (line: string) => void,
): Promise<BuiltRelease> {
  const tag = `scalingo-emulator/app-${app.id}:${deploymentId}`;
  const labels = {
    [LABELS.managed]: '1',
    [LABELS.instance]: deps.instanceId,
    [LABELS.appId]: app.id,
    [LABELS.deploymentId]: deploymentId,
  };
  const procfile = existsSync(join(context, 'Procfile'))
    ? parseProcfile(readFileSync(join(context, 'Procfile'), 'utf8'))
    : null;
  deps.onCode?.(app.id, deploymentId, context);
  let processTypes: Record<string, string>;
  const network = deps.buildNetwork ?? OFFLINE_BUILDS;
  const offline = watchOfflineBuild(network, say);
  try {
    const hasDockerfile = existsSync(join(context, 'Dockerfile'));
    const detected = deps.buildCacheDir ? detectBuildpack(context) : null;
    if (deps.buildCacheDir && detected) {
      if (hasDockerfile)
        say(
          `-----> Dockerfile not used: ${detected.file} makes this a ${detected.language} app, built by its buildpack as on the platform`,
        );
      processTypes = await buildpackBuild(
        {
          runtime: deps.runtime,
          instanceId: deps.instanceId,
          appId: app.id,
          deploymentId,
          context,
          cacheDir: deps.buildCacheDir(app.id),
          tag,
          labels,
          procfile,
          env: deps.appEnv?.(app.id) ?? {},
          network,
          imageSource: deps.imageSource,
          signal: deps.stopping,
          say: offline.say,
        },
        detected.language,
      );
    } else if (hasDockerfile) {
      say(
        deps.buildCacheDir
          ? '-----> Dockerfile detected: building it (no buildpack applies; an emulator convenience, the platform builds with buildpacks only)'
          : '-----> Dockerfile detected: building it (buildpacks.enabled is false)',
      );
      await deps.runtime.buildImage({ contextDir: context, tag, labels, onLine: (l) => say(`       ${l}`) });
      processTypes = procfile ?? { web: '' }; // '' = the image's own CMD
    } else {
      const stackImage = deps.stacks[app.stack_id];
      if (!stackImage) throw new Error(`unknown stack ${app.stack_id}`);
      if (!procfile || !Object.keys(procfile).length)
        throw new Error(
          'no Procfile found: declare the process types of the app (e.g. `web: <command>`), or add a Dockerfile',
        );
      if (stackImage === deps.baseImage) await deps.runtime.ensureBaseImage(stackImage);
      else if (!(await deps.runtime.imageExists(stackImage)))
        throw new Error(`the image ${stackImage} of stack ${app.stack_id} is not on the local engine`);
      say(`-----> Building on stack ${app.stack_id} (${stackImage})`);
      await deps.runtime.buildImage({
        contextDir: context,
        dockerfile: `FROM ${stackImage}\nCOPY . /app\nWORKDIR /app\n`,
        tag,
        labels,
        onLine: (l) => say(`       ${l}`),
      });
      processTypes = procfile;
    }
  } catch (err) {
    say(`!      Build failed: ${(err as Error).message}`);
    const hint = offline.hint() ?? missingNetworkHint(network, (err as Error).message);
    if (hint) say(hint);
    throw Object.assign(err as Error, { status: 'build-error' });
  }
  const hook = deployHook(context, processTypes, deployedBefore);
  delete processTypes.postdeploy;
  return { tag, processTypes, hook };
}

/**
 * The formation follows the new process types. First deployment: one web container (when there is
 * a web type), other types at 0; later ones keep the amounts and sizes, drop the types gone.
 */
export function applyFormation(containers: ContainersStore, appId: string, processTypes: Record<string, string>): void {
  if (!containers.formation(appId).length) {
    for (const type of Object.keys(processTypes))
      containers.upsertFormation({
        app_id: appId,
        type,
        id: objectId(),
        amount: type === 'web' ? 1 : 0,
        size: 'M',
        command: processTypes[type],
      });
    return;
  }
  for (const f of containers.formation(appId)) if (!(f.type in processTypes)) containers.deleteFormation(appId, f.type);
  for (const type of Object.keys(processTypes)) {
    const f = containers.formation(appId).find((x) => x.type === type);
    containers.upsertFormation({
      app_id: appId,
      type,
      id: f?.id ?? objectId(),
      amount: f?.amount ?? 0,
      size: f?.size ?? 'M',
      command: processTypes[type],
    });
  }
}

/**
 * The hook of a deployment: the manifest's scripts.first-deploy on the app's first successful
 * deployment (a one-click deploy's), otherwise the Procfile's postdeploy entry.
 */
function deployHook(
  context: string,
  processTypes: Record<string, string>,
  deployedBefore: boolean,
): { name: string; command: string } | null {
  if (!deployedBefore) {
    const file = join(context, 'scalingo.json');
    try {
      const firstDeploy = existsSync(file)
        ? (JSON.parse(readFileSync(file, 'utf8')) as { scripts?: { 'first-deploy'?: unknown } }).scripts?.[
            'first-deploy'
          ]
        : undefined;
      if (typeof firstDeploy === 'string' && firstDeploy.trim()) return { name: 'first-deploy', command: firstDeploy };
    } catch {
      // A manifest that is not JSON names no hook (the platform reads it only for review apps and one-click deploys).
    }
  }
  return processTypes.postdeploy ? { name: 'postdeploy', command: processTypes.postdeploy } : null;
}
