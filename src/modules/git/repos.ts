import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { preReceiveHook } from './pre-receive-hook.ts';

const run = promisify(execFile);

/** Environment for the git binaries: nothing of the emulator's own GIT_* variables leaks in. */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', LANG: 'C', ...extra };
}

/**
 * One bare repository per app, `<state dir>/git/<app id>.git`: named by the app's id, so a rename
 * keeps it as is; created at the first push or fetch; removed with the app.
 */
export function createRepos(deps: { root: string; maxPushBytes: number }) {
  const creating = new Map<string, Promise<string>>();
  const hook = preReceiveHook(process.execPath);
  // Whether the root may hold a repository: only init() creates it. Read once, so that deleting apps
  // nobody pushed to (most deletions) stats nothing.
  let rootExists: boolean | undefined;

  async function init(dir: string): Promise<string> {
    if (!existsSync(join(dir, 'HEAD'))) {
      rootExists = true;
      await mkdir(deps.root, { recursive: true });
      await run('git', ['init', '--bare', '--quiet', dir], { env: gitEnv(), timeout: 30_000 });
      // The platform deploys master or main; a repository starts on main (docs/fidelity.md).
      await run('git', ['symbolic-ref', 'HEAD', 'refs/heads/main'], { env: gitEnv({ GIT_DIR: dir }), timeout: 30_000 });
      // receive-pack refuses a pack larger than this before writing it (the sources' archive bound).
      await run('git', ['config', 'receive.maxInputSize', String(deps.maxPushBytes)], {
        env: gitEnv({ GIT_DIR: dir }),
        timeout: 30_000,
      });
    }
    // (Re)written when it differs: the hook names this Node binary, which may change between runs.
    const hookFile = join(dir, 'hooks', 'pre-receive');
    const current = await readFile(hookFile, 'utf8').catch(() => '');
    if (current !== hook) {
      await mkdir(join(dir, 'hooks'), { recursive: true });
      await writeFile(hookFile, hook);
      await chmod(hookFile, 0o755);
    }
    return dir;
  }

  return {
    dirOf: (appId: string) => join(deps.root, `${appId}.git`),
    /** The app's repository, created (or its hook refreshed) when needed; concurrent callers share the work. */
    ensure(appId: string): Promise<string> {
      let p = creating.get(appId);
      if (!p) {
        p = init(join(deps.root, `${appId}.git`)).finally(() => creating.delete(appId));
        creating.set(appId, p);
      }
      return p;
    },
    /** After a deployed push: a clone checks out the branch that was pushed. */
    async setHead(appId: string, branch: string): Promise<void> {
      await run('git', ['symbolic-ref', 'HEAD', `refs/heads/${branch}`], {
        env: gitEnv({ GIT_DIR: join(deps.root, `${appId}.git`) }),
        timeout: 30_000,
      });
    },
    /** Where a ref of the app's repository points now (null: it does not exist). */
    async refValue(appId: string, ref: string): Promise<string | null> {
      try {
        const { stdout } = await run('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], {
          env: gitEnv({ GIT_DIR: join(deps.root, `${appId}.git`) }),
          timeout: 30_000,
        });
        return stdout.trim() || null;
      } catch {
        return null;
      }
    },
    // A stat first: most deleted apps were never pushed to, and a recursive removal costs more.
    remove: async (appId: string) => {
      rootExists ??= existsSync(deps.root);
      if (!rootExists) return;
      const dir = join(deps.root, `${appId}.git`);
      if (existsSync(dir)) await rm(dir, { recursive: true, force: true });
    },
  };
}

export type Repos = ReturnType<typeof createRepos>;
