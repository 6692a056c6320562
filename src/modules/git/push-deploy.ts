import { ApiError } from '../../http/errors.ts';
import { type Logger } from '../../shared/logger.ts';
import { appUrl, type Urls } from '../../shared/urls.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { type DeploymentStreamEvent, type DeploymentsService, FINISHED } from '../deployments/deployments.service.ts';
import { type DeploymentsStore } from '../deployments/deployments.store.ts';
import { type Repos } from './repos.ts';

/** Who pushes to which app (from the SSH key and the command). */
export interface PushContext {
  appId: string;
  user: UserRow;
}

// The platform deploys these two branches only (doc.scalingo.com, "Deploy with Git").
const DEPLOYED_BRANCHES = new Set(['refs/heads/master', 'refs/heads/main']);
const UPDATE_LINE = /^([0-9a-f]{40}(?:[0-9a-f]{24})?) ([0-9a-f]{40}(?:[0-9a-f]{24})?) (refs\/\S{1,250})$/;
const MAX_REF_UPDATES = 1000;

const FAILURE_REASONS: Record<string, string> = {
  'build-error': 'Build failed',
  'crashed-error': 'The application crashed while starting',
  'timeout-error': 'The application did not answer on $PORT in time',
  aborted: 'The deployment was aborted',
  'hook-error': 'A deployment hook failed',
};

export interface PushDeployerDeps {
  apps: AppsService;
  deployments: DeploymentsService;
  deploymentsStore: DeploymentsStore;
  repos: Repos;
  urls: () => Urls;
  /** The app's logs: build lines of a push go there as `[deployment]`. */
  appendLog: (appId: string, container: string, text: string) => void;
  logger: Logger;
}

/**
 * What the pre-receive hook of a push runs: the ref updates are checked as the platform does
 * (master or main only, no deletion, no tag), then the pushed commit is deployed like any other
 * source, its output streamed to the pusher as it happens; the exit status accepts the push when
 * the deployment succeeded and declines it otherwise, so the ref never moves to a failed build.
 */
export function createPushDeployer(deps: PushDeployerDeps) {
  function refuse(out: (t: string) => void, lines: string[]): number {
    out(lines.map((l) => ` !     ${l}\n`).join(''));
    return 1;
  }

  /** The app as the pusher may still deploy it (it may have been deleted, or access removed, since the push began). */
  function deployable(ctx: PushContext): AppRow | undefined {
    try {
      return deps.apps.visibleApp(ctx.user, ctx.appId);
    } catch {
      return undefined;
    }
  }

  return async function handlePush(
    ctx: PushContext,
    refs: string,
    env: Record<string, string>,
    out: (text: string) => void,
    signal: AbortSignal,
  ): Promise<number> {
    const updates = refs
      .split('\n')
      .filter(Boolean)
      .map((l) => UPDATE_LINE.exec(l.trim()));
    const matched = updates.filter((u) => u !== null);
    if (!updates.length || updates.length > MAX_REF_UPDATES || matched.length !== updates.length)
      return refuse(out, ['The ref updates of this push cannot be read.']);
    const parsed = matched.map((u) => ({ oldSha: u[1], newSha: u[2], ref: u[3] }));
    const others = parsed.filter((u) => !DEPLOYED_BRANCHES.has(u.ref));
    if (others.length) {
      return refuse(out, [
        `Only the master and main branches are deployed; refused: ${others.map((u) => u.ref.replace(/^refs\/heads\//, '')).join(', ')}.`,
        'Deploy another branch with: git push <remote> <branch>:main',
      ]);
    }
    const deleted = parsed.find((u) => /^0+$/.test(u.newSha));
    if (deleted)
      return refuse(out, [
        `Deleting the branch ${deleted.ref.replace('refs/heads/', '')} is refused: push the code to deploy instead.`,
      ]);
    // Both branches in one push: main is the one deployed.
    const update = parsed.find((u) => u.ref === 'refs/heads/main') ?? parsed[0];
    const branch = update.ref.replace('refs/heads/', '');

    let app = deployable(ctx);
    if (!app) return refuse(out, ['This app does not exist any more, or you may no longer deploy it.']);
    const appId = app.id;
    out(`<-- Start deployment of ${app.name} -->\n`);
    const source = { kind: 'push' as const, location: deps.repos.dirOf(app.id), gitRef: update.newSha, gitEnv: env };

    // Events of the deployment started below are taken from the bus as they come (the first ones
    // are emitted while deploy() runs, before its id is known).
    let deploymentId: string | undefined;
    const early: DeploymentStreamEvent[] = [];
    let settle!: (status: string) => void;
    const finished = new Promise<string>((ok) => (settle = ok));
    const onEvent = (e: DeploymentStreamEvent) => {
      if (e.appId !== appId) return;
      if (!deploymentId) return void early.push(e);
      if (e.deploymentId !== deploymentId) return;
      if (e.type === 'log') {
        const content = String(e.data.content ?? '');
        if (!signal.aborted) out(content);
        deps.appendLog(e.appId, 'deployment', content.replace(/\n$/, ''));
      } else if (e.type === 'status' && FINISHED.has(String(e.data.status))) settle(String(e.data.status));
    };

    let waited = false;
    for (;;) {
      if (waited) {
        // The ref moves only when this hook ends: another push deployed meanwhile would be overwritten.
        const current = await deps.repos.refValue(app.id, update.ref);
        if (current !== (/^0+$/.test(update.oldSha) ? null : update.oldSha))
          return refuse(out, [
            'The branch moved while this push waited (another push was deployed first): fetch, then push again.',
          ]);
      }
      deps.deployments.bus.on('event', onEvent);
      try {
        deploymentId = deps.deployments.deploy(app, source, ctx.user).id;
        break;
      } catch (err) {
        deps.deployments.bus.off('event', onEvent);
        early.length = 0;
        const running = deps.deployments.inProgress(app.id);
        // One deployment at a time per app: this push waits for the running one (the platform
        // queues a deployment that cannot start yet), bounded by the session's time limit.
        if (!(err instanceof ApiError && err.status === 409 && running)) return refuse(out, [(err as Error).message]);
        if (!waited) out('-----> Another deployment of this app is running: this one starts when it ends\n');
        waited = true;
        await Promise.race([running, new Promise((ok) => signal.addEventListener('abort', ok, { once: true }))]);
        if (signal.aborted) return 1;
        app = deployable(ctx);
        if (!app) return refuse(out, ['This app does not exist any more, or you may no longer deploy it.']);
      }
    }
    for (const e of early.splice(0)) onEvent(e);
    // The pipeline always ends with a final status; its promise covers an unexpected failure too.
    const running = deps.deployments.inProgress(app.id);
    const status = await Promise.race([
      finished,
      (running ?? Promise.resolve()).then(
        () => (deploymentId ? deps.deploymentsStore.byId(deploymentId)?.status : undefined) ?? 'aborted',
      ),
    ]);
    deps.deployments.bus.off('event', onEvent);
    if (status === 'success') {
      await deps.repos
        .setHead(app.id, branch)
        .catch((err) => deps.logger.warn({ err }, 'git push: could not set HEAD'));
      out(`<-- ${appUrl(deps.urls(), app.name)} -->\n`);
      return 0;
    }
    return refuse(out, [
      'Error deploying the application',
      `→ ${FAILURE_REASONS[status] ?? status} (deployment ${deploymentId}, status ${status})`,
    ]);
  };
}
