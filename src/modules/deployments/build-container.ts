import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Readable } from 'node:stream';
import { type ContainerRuntime, LABELS } from '../../runtime/runtime.ts';
import { buildContainerNetwork, OFFLINE_BUILDS } from './build-network.ts';

// One step of a buildpack-like build run in a container and committed as an image: the files are put
// in /app, the app's build cache is bind-mounted at /cache (package caches: mounted, never copied),
// the network is `builds.network`'s (none by default), and the app's environment is read from a file in the cache rather than given
// as the container's environment, which `docker commit` would write into the image.

const BUILD_MEMORY = 2 * 1024 * 1024 * 1024;
/** Where the step's script finds the app's variables (in /cache, removed once the step ends). */
export const BUILD_ENV_FILE = '.build-env';

export interface BuildStep {
  runtime: ContainerRuntime;
  instanceId: string;
  appId: string;
  deploymentId: string;
  cacheDir: string;
  /** builds.network: what the step reaches (build-network.ts); absent = offline. */
  network?: string;
  say: (line: string) => void;
}

/** Environment variable names a shell can export; others (the platform refuses them) are left out. */
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** What the buildpacks' `export_env_dir` never exports from the app's variables (Scalingo/nodejs-buildpack lib/environment.sh). */
const NOT_EXPORTED = new Set(['PATH', 'GIT_DIR', 'CPATH', 'CPPATH', 'LD_PRELOAD', 'LIBRARY_PATH', 'LANG', 'BUILD_DIR']);

/** `NAME='value'` lines, quoted for sh (a `'` becomes `'\''`). */
export function shellEnv(env: Record<string, string>): string {
  return Object.entries(env)
    .filter(([k]) => SHELL_NAME.test(k) && !NOT_EXPORTED.has(k))
    .map(([k, v]) => `${k}='${v.replaceAll("'", "'\\''")}'\n`)
    .join('');
}

/**
 * Runs `script` in a container of `image` with `files` extracted in /app; resolves the container's id
 * once it exited 0 (for `commit`), removes it and throws when it did not.
 */
export async function runBuildStep(
  s: BuildStep,
  o: { image: string; files: Readable; script: string; env: Record<string, string>; what: string; name: string },
): Promise<string> {
  const { runtime } = s;
  const envFile = join(s.cacheDir, BUILD_ENV_FILE);
  writeFileSync(envFile, shellEnv(o.env), { mode: 0o600 });
  const info = await runtime
    .run(
      {
        name: `scalingo-emu-${s.instanceId}-${o.name}-${s.deploymentId.toLowerCase()}`,
        image: o.image,
        cmd: ['sh', '-c', o.script],
        env: {},
        // Not the instance label: the containers area reconciles (and removes) what carries it.
        labels: {
          [LABELS.owner]: s.instanceId,
          [LABELS.appId]: s.appId,
          [LABELS.type]: 'build',
          [LABELS.deploymentId]: s.deploymentId,
        },
        memoryBytes: BUILD_MEMORY,
        binds: [`${s.cacheDir}:/cache`],
        ...buildContainerNetwork(s.network ?? OFFLINE_BUILDS),
        workingDir: '/app',
      },
      { start: false },
    )
    .catch((err) => {
      rmSync(envFile, { force: true });
      throw err;
    });
  try {
    await runtime.putArchive(info.engineId, '/app', o.files);
    await runtime.start(info.engineId);
    const logs = await runtime.logs(info.engineId, { follow: true });
    // The script's own lines (-----> steps, ! errors, indented details) as they are; tools' output indented.
    for await (const l of logs) if (l.text.trim()) s.say(/^(-----> |!|\s)/.test(l.text) ? l.text : `       ${l.text}`);
    const code = await runtime.wait(info.engineId);
    if (code !== 0) throw new Error(`the ${o.what} exited with code ${code}`);
    return info.engineId;
  } catch (err) {
    removeLater(runtime, info.engineId);
    throw err;
  } finally {
    rmSync(envFile, { force: true });
  }
}

/** Commits a step's container as `tag`, then removes the container (not waited for). */
export async function commitStep(
  runtime: ContainerRuntime,
  engineId: string,
  tag: string,
  labels: Record<string, string>,
): Promise<void> {
  try {
    const label = Object.entries(labels)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(' ');
    await runtime.commit(engineId, { tag, changes: ['WORKDIR /app', 'CMD ["sh"]', `LABEL ${label}`] });
  } finally {
    removeLater(runtime, engineId);
  }
}

/** The container's removal (seconds for a large layer) is not waited for: the next layer does not need it. */
export function removeLater(runtime: ContainerRuntime, engineId: string): void {
  void runtime.remove(engineId).catch(() => undefined);
}
