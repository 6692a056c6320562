// Wiring of the git endpoint (issue #13): bare repositories per app, the SSH server that runs
// git on them, and the pre-receive hooks' way back in, which deploys what is pushed. Its area binds the
// SSH port when the emulator starts and closes it after the API server.
import { join } from 'node:path';
import type { EmulatorConfig } from '../config/schema.ts';
import type { Logger } from '../shared/logger.ts';
import type { Urls } from '../shared/urls.ts';
import type { AppsService } from '../modules/apps/apps.service.ts';
import type { DeploymentsService } from '../modules/deployments/deployments.service.ts';
import type { DeploymentsStore } from '../modules/deployments/deployments.store.ts';
import type { KeysService } from '../modules/keys/keys.service.ts';
import { createHookServer } from '../modules/git/hook-server.ts';
import { createPushDeployer, type PushContext } from '../modules/git/push-deploy.ts';
import { createRepos } from '../modules/git/repos.ts';
import type { TunnelTargets } from '../modules/addons/addon-tunnels.ts';
import { createSshEndpoint } from '../modules/git/ssh-server.ts';
import type { Area } from './area.ts';

export interface GitModuleDeps {
  config: EmulatorConfig;
  /** The data dir (the SSH host key is kept there), null with --in-memory. */
  dataDir: string | null;
  /** Where the repositories go (the data dir, or a temp dir removed on stop). */
  stateDir: string;
  apps: AppsService;
  keys: KeysService;
  deployments: DeploymentsService;
  deploymentsStore: DeploymentsStore;
  appendLog: (appId: string, container: string, text: string) => void;
  urls: () => Urls;
  logger: Logger;
  /** db-tunnel targets (real addon servers), when they run. */
  tunnels?: TunnelTargets;
  /** The bound SSH port's URL, once known. */
  setUrls?: (urls: Pick<Urls, 'git'>) => void;
}

export function createGitModule(deps: GitModuleDeps) {
  const { config, logger } = deps;
  const repos = createRepos({ root: join(deps.stateDir, 'git'), maxPushBytes: config.sources.maxArchiveBytes });
  const onPush = createPushDeployer({ apps: deps.apps, deployments: deps.deployments, deploymentsStore: deps.deploymentsStore, repos, urls: deps.urls, appendLog: deps.appendLog, logger });
  const hooks = createHookServer<PushContext>({ logger, onPush });
  const ssh = createSshEndpoint({
    host: config.host,
    port: config.sshPort,
    hostKeyFile: deps.dataDir ? join(deps.dataDir, 'ssh_host_ed25519_key') : null,
    keys: deps.keys,
    apps: deps.apps,
    repos,
    hooks,
    limits: config.git,
    logger,
    tunnels: deps.tunnels,
  });
  // The repository goes with its app (a rename keeps it: it is named by the app's id).
  deps.apps.addHooks({
    afterDelete: (a) => {
      if (!deps.apps.find(a.id)) repos.remove(a.id).catch((err) => logger.warn({ err, app: a.name }, 'git: cannot remove the repository'));
    },
  });

  async function listen(): Promise<number> {
    await hooks.listen();
    return ssh.listen();
  }
  async function close(): Promise<void> {
    await ssh.close();
    await hooks.close();
  }
  const area: Area = {
    name: 'git',
    async open() {
      const port = await listen();
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      deps.setUrls?.({ git: `ssh://git@${host}:${port}` });
    },
    stop: close,
  };

  return {
    repos,
    area,
    /** Binds the SSH port (and the hooks' port on 127.0.0.1); returns the SSH port. */
    listen,
    /** The pre-receive hooks' port on 127.0.0.1 (tests). */
    hookPort: hooks.port,
    close,
  };
}

export type GitModule = ReturnType<typeof createGitModule>;
