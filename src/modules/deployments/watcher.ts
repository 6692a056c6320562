import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { defined } from '../../shared/defined.ts';
import { type FolderWatch, watchFolderTree } from '../../shared/folder-watch.ts';
import { type Logger } from '../../shared/logger.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type UserRow } from '../auth/principal.ts';
import { type DeploymentsService } from './deployments.service.ts';

export interface BoundApp {
  name: string;
  dir: string;
  owner?: string;
  stack?: string;
}

const IGNORED = /(^|[/\\])(\.git|node_modules)([/\\]|$)/;

/**
 * Directories bound to apps in the config: the app is created if missing, deployed when it never
 * was successfully (or when files changed since its running version was deployed), and redeployed on every change
 * (debounced; changes during a deployment coalesce into one more).
 */
export function bindDirectories(deps: {
  bound: BoundApp[];
  apps: AppsService;
  deployments: DeploymentsService;
  userByLogin: (l: string) => UserRow | undefined;
  defaultOwner: string;
  debounceMs: number;
  logger: Logger;
}) {
  const timers = new Set<NodeJS.Timeout>();
  const toWatch: { dir: string; onChange: (event: string, path: string) => void }[] = [];
  for (const b of deps.bound) {
    const dir = resolve(b.dir);
    mkdirSync(dir, { recursive: true });
    const owner = deps.userByLogin(b.owner ?? deps.defaultOwner);
    if (!owner) {
      deps.logger.error({ app: b.name, owner: b.owner }, 'bound app: unknown owner, skipped');
      continue;
    }
    let app = deps.apps.find(b.name) ?? deps.apps.create(owner, { name: b.name, stack_id: b.stack ?? null });
    deps.apps.store.setSourceDir(app.id, dir);
    app = defined(deps.apps.find(app.id), `app ${b.name}`);
    const source = { kind: 'directory' as const, location: dir };
    // Up to date when no file changed since the running version's deployment started, as `up` decides
    // (src/cli/up/up.ts): the app's last_deployed_at is no measure, a failed or stopped deployment sets it too.
    const running = deps.deployments.lastSuccess(app.id);
    if (!running || newestMtime(dir) > running.created_at) deps.deployments.deploySoon(app, source, owner);
    let timer: NodeJS.Timeout | undefined;
    toWatch.push({
      dir,
      onChange: (event, path) => {
        if (timer) {
          clearTimeout(timer);
          timers.delete(timer);
        }
        const t = setTimeout(() => {
          timers.delete(t);
          const fresh = deps.apps.find(app.id);
          if (!fresh) return;
          deps.logger.info({ app: fresh.name, event, path }, 'source changed: redeploying');
          deps.deployments.deploySoon(fresh, source, owner);
        }, deps.debounceMs);
        timer = t;
        timers.add(t);
      },
    });
  }
  // chokidar is loaded only when the config binds directories (most emulators bind none).
  const watching: Promise<FolderWatch[]> = Promise.all(
    toWatch.map(({ dir, onChange }) =>
      watchFolderTree(
        dir,
        { ignoreInitial: true, ignored: (p: string) => IGNORED.test(p) },
        { onEvent: onChange, warn: (line) => deps.logger.warn({ dir }, line) },
      ),
    ),
  );
  return {
    /** Resolves once every watcher is watching. */
    async ready() {
      await watching;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      const watchers = await watching.catch(() => []);
      await Promise.all(watchers.map((w) => w.close()));
    },
  };
}

function newestMtime(dir: string): number {
  let newest = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, e.name);
      if (IGNORED.test(full)) continue;
      if (e.isDirectory()) walk(full);
      else newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  walk(dir);
  return newest;
}
