// Wiring of the git endpoint (issue #13): bare repositories per app, the SSH server that runs
// git on them, and the pre-receive hooks' way back in, which deploys what is pushed. Its area binds the
// SSH port when the emulator starts and closes it after the API server.
import { join } from 'node:path';
import { urlHostOf } from '../config/schema.ts';
import { type AppHooks } from '../modules/apps/apps.service.ts';
import { createHookServer } from '../modules/git/hook-server.ts';
import { createPushDeployer, type PushContext } from '../modules/git/push-deploy.ts';
import { createRepos } from '../modules/git/repos.ts';
import { createSshEndpoint } from '../modules/git/ssh-server.ts';
import { type Unit } from './area.ts';
import { defineArea } from './define-area.ts';

export const gitArea = defineArea({
  name: 'git',
  folders: ['git'],
  needs: ['accounts', 'apps', 'containers', 'addons', 'logs'],
  build(shared, deps) {
    const { config, logger } = shared;
    const { apps } = deps.apps;
    const { deployments, deploymentsStore } = deps.containers;
    const repos = createRepos({ root: join(shared.stateDir, 'git'), maxPushBytes: config.sources.maxArchiveBytes });
    const appendLog = (id: string, container: string, text: string) => void deps.logs.append(id, container, text);
    const onPush = createPushDeployer({
      apps,
      deployments,
      deploymentsStore,
      repos,
      urls: shared.urls,
      appendLog,
      logger,
    });
    const hooks = createHookServer<PushContext>({ logger, onPush });
    const ssh = createSshEndpoint({
      host: config.host,
      port: config.sshPort,
      hostKeyFile: shared.dataDir ? join(shared.dataDir, 'ssh_host_ed25519_key') : null,
      keys: deps.accounts.keys,
      apps,
      repos,
      hooks,
      limits: config.git,
      logger,
      tunnels: deps.addons.tunnels,
    });
    // The repository goes with its app (a rename keeps it: it is named by the app's id).
    const appHooks: AppHooks[] = [
      {
        afterDelete: (a, gone) => {
          if (!gone) return;
          repos.remove(a.id).catch((err) => logger.warn({ err, app: a.name }, 'git: cannot remove the repository'));
        },
      },
    ];

    async function listen(): Promise<number> {
      await hooks.listen();
      return ssh.listen();
    }
    async function close(): Promise<void> {
      await ssh.close();
      await hooks.close();
    }
    const unit: Unit = {
      name: 'git',
      async open() {
        const port = await listen();
        shared.setUrls({ git: `ssh://git@${urlHostOf(config)}:${port}` });
      },
      stop: close,
    };

    const api = {
      repos,
      /** The pre-receive hooks' port on 127.0.0.1 (tests). */
      hookPort: hooks.port,
    };
    return { api, units: [unit], appHooks };
  },
});
