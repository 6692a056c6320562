// Wiring of the git endpoint (issue #13): bare repositories per app, the SSH server that runs
// git on them, and the pre-receive hooks' way back in, which deploys what is pushed.
import { join } from 'node:path';
import type { EmulatorConfig } from '../../config/schema.ts';
import type { Logger } from '../../shared/logger.ts';
import type { Urls } from '../../shared/urls.ts';
import type { AppsService } from '../apps/apps.service.ts';
import type { DeploymentsService } from '../deployments/deployments.service.ts';
import type { DeploymentsStore } from '../deployments/deployments.store.ts';
import type { KeysService } from '../keys/keys.service.ts';
import { createHookServer } from './hook-server.ts';
import { createPushDeployer, type PushContext } from './push-deploy.ts';
import { createRepos } from './repos.ts';
import type { TunnelTargets } from '../addons/addon-tunnels.ts';
import { createSshEndpoint } from './ssh-server.ts';

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

  return {
    repos,
    /** Binds the SSH port (and the hooks' port on 127.0.0.1); returns the SSH port. */
    async listen(): Promise<number> {
      await hooks.listen();
      return ssh.listen();
    },
    /** The pre-receive hooks' port on 127.0.0.1 (tests). */
    hookPort: hooks.port,
    async close(): Promise<void> {
      await ssh.close();
      await hooks.close();
    },
  };
}

export type GitModule = ReturnType<typeof createGitModule>;
