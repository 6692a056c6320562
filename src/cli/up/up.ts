// `up`: a project folder running as the platform would run it, in one call. Reads the folder and its
// scalingo.json, makes the app, its addons and variables through the API of an emulator (already
// running, or started here), deploys, applies the formation, follows the logs, and redeploys on change.

import { resolve } from 'node:path';
import { type Writable } from 'node:stream';
import { type Emulator } from '../../emulator.ts';
import { type AddonAccess, addonAccess } from './addon-access.ts';
import { type ApiClient, apiClient } from './api-client.ts';
import { newestChange } from './changes.ts';
import { type DeploymentResult, deployFolder } from './deploy.ts';
import { type Endpoint, type EndpointOptions, openEndpoint } from './emulator-endpoint.ts';
import { followLogs } from './log-follow.ts';
import { createLogPrinter, type LogPrinter } from './log-printer.ts';
import { manifestVariables } from './manifest.ts';
import { type Project, readManifest, readProject } from './project.ts';
import {
  type AddonJson,
  addonsRunning,
  applyFormation,
  ensureAddons,
  ensureApp,
  ensureVariables,
  wantedAddons,
} from './provision.ts';
import { waitUntilServed } from './served.ts';
import { UpError } from './up-error.ts';
import { readUpRecord, writeUpRecord } from './up-record.ts';
import { describeChange, watchFolder } from './watch.ts';

export interface UpOptions extends EndpointOptions {
  /** The project folder (default: the working directory). */
  dir?: string;
  /** The app's name (default: the folder's name, made valid). */
  app?: string;
  /** Redeploy on changes (default true). */
  watch?: boolean;
  /** Follow and print the app's logs (default true). */
  logs?: boolean;
  /** Where lines go (default: stdout). */
  out?: Writable & { isTTY?: boolean };
  /** Colours (default: when `out` is a terminal and NO_COLOR is unset). */
  color?: boolean;
  /** Debounce of redeploys after a change, ms (default 300). */
  debounceMs?: number;
  /**
   * Aborted, `up` stops whatever the moment: no new call, the work in flight ended, the emulator it
   * started stopped (with its containers); `up()` then rejects with the signal's reason.
   */
  signal?: AbortSignal;
  /** The process running the emulator this `up` started (the command's own, or its background one), recorded for `down`. */
  emulatorPid?: number;
}

export interface UpHandle {
  app: string;
  /** http://<app>.localhost:<router port> */
  url: string;
  apiUrl: string;
  /** An API token of the configured user (valid while `up` runs). */
  token: string;
  addons: AddonAccess[];
  /** The variables for the official CLI (SCALINGO_API_URL…). */
  cliEnv: Record<string, string>;
  /** The deployment made at start (undefined when the running version was already up to date). */
  firstDeployment?: DeploymentResult;
  /** Deployments made since (live changes), newest last. */
  deployments: DeploymentResult[];
  /** Deploys now (as a change would); resolves when it ends. */
  redeploy(): Promise<DeploymentResult>;
  /** Stops watching and following; stops the emulator `up` started (its containers stop, data stays). */
  stop(): Promise<void>;
  /** The emulator `up` started (undefined when it used one already running); not a stable interface. */
  emulator?: Emulator;
}

export async function up(opts: UpOptions = {}): Promise<UpHandle> {
  const out = opts.out ?? process.stdout;
  const print = createLogPrinter(out, opts.color ?? (Boolean(out.isTTY) && !process.env.NO_COLOR));
  const project = readProject(opts.dir ?? '.', opts.app);
  print.info(
    `${project.appName}: ${project.dir} (${project.detected.join(', ')}${Object.keys(project.manifest).length ? ', scalingo.json' : ''})`,
  );
  opts.signal?.throwIfAborted();
  const endpoint = await openEndpoint(opts, (l) => print.info(l));
  try {
    opts.signal?.throwIfAborted();
    recordStart(project, endpoint, opts);
    return await start(project, endpoint, opts, print);
  } catch (err) {
    await endpoint.close().catch(() => undefined);
    throw err;
  }
}

async function start(project: Project, endpoint: Endpoint, opts: UpOptions, print: LogPrinter): Promise<UpHandle> {
  const api = apiClient(endpoint.apiUrl, endpoint.token, opts.signal);
  const name = project.appName;
  // Bad input is refused before anything is made.
  const wanted = await wantedAddons(api, project.manifest);
  if (!(await api.find(`/v1/apps/${name}`)))
    manifestVariables(project.manifest.env, { app: name, url: '', existing: {}, shell: opts.env ?? process.env });
  const { app, created } = await ensureApp(api, name, project.manifest);
  print.info(created ? `Created the app ${name}` : `Resuming the app ${name}`);
  await ensureAddons(api, name, wanted, (l) => print.info(l));
  const set = await ensureVariables(api, app, project.manifest, opts.env ?? process.env);
  if (set.length) print.info(`Variables set from scalingo.json: ${set.join(', ')}`);
  // The addon servers start while the code builds (the deployment waits for them before its hook and containers).
  const running = addonsRunning(api, name, (l) => print.info(l));
  running.catch(() => undefined);

  const logs = opts.logs === false ? undefined : followLogs(api, name, (c, text) => print.line(c, text));
  const deployments: DeploymentResult[] = [];
  const deploy = async (why: string): Promise<DeploymentResult> => {
    print.info(`Deploying (${why})…`);
    if (why !== 'start') {
      // A changed scalingo.json is read again: a mistake in it is shown and this deployment skipped.
      const manifest = readManifest(project.dir);
      const changed = await ensureVariables(api, app, manifest, opts.env ?? process.env);
      if (changed.length) print.info(`Variables set from scalingo.json: ${changed.join(', ')}`);
    }
    const result = await deployFolder(api, name, project.dir, (l) => print.line('build', l));
    if (result.status === 'success') print.info(`Deployed in ${result.seconds.toFixed(1)} s: ${app.url}`);
    else
      print.info(
        `Deployment ${result.status}${result.reason ? `: ${result.reason}` : ''} — the previous version keeps running`,
      );
    return result;
  };

  let firstDeployment: DeploymentResult | undefined;
  // The running version is the last successful deployment's: a change after its start is not in it. (The app's
  // last_deployed_at is no measure: a deployment that failed or was cut short by a stop sets it too.)
  const deployed = await lastSuccess(api, name);
  const needsDeploy = deployed === null || newestChange(project.dir) > Date.parse(deployed.created_at);
  if (needsDeploy) {
    firstDeployment = await deploy('start');
    if (firstDeployment.status !== 'success' && !(await lastSuccess(api, name))) {
      logs?.close();
      throw new UpError(
        `the first deployment of ${name} failed (${firstDeployment.status}${firstDeployment.reason ? `: ${firstDeployment.reason}` : ''})`,
      );
    }
  } else {
    print.info('The running version is up to date: no deployment');
  }
  const addons = await running.catch((err: Error) => {
    logs?.close();
    throw err;
  });
  const scaled = await applyFormation(api, name, project.manifest);
  if (scaled) print.info(`Formation from scalingo.json: ${scaled}`);

  // After a restart the containers come back in the background: the app is announced once it is served.
  await waitUntilServed(api, name, app.url);
  const access = await addonAccess(api, name, addons);
  const cliEnv = {
    SCALINGO_API_URL: endpoint.apiUrl,
    SCALINGO_AUTH_URL: endpoint.apiUrl,
    SCALINGO_DB_URL: endpoint.apiUrl,
    SCALINGO_REGION: endpoint.config.region.name,
  };

  // Redeploys in order: changes during a deployment make one more (the one waiting takes them all).
  let chain: Promise<unknown> = Promise.resolve();
  let waiting: Promise<DeploymentResult> | undefined;
  const redeploy = (why: string) => {
    if (waiting) return waiting;
    const p = chain
      .then(() => {
        waiting = undefined;
        return deploy(why);
      })
      .then((r) => (deployments.push(r), r));
    waiting = p;
    chain = p.catch(() => undefined);
    return p;
  };
  const watcher =
    opts.watch === false
      ? undefined
      : await watchFolder(
          project.dir,
          opts.debounceMs ?? 300,
          (paths) =>
            void redeploy(`changed: ${describeChange(paths)}`).catch(
              (err: Error) => opts.signal?.aborted || print.info(`Not deployed: ${err.message}`),
            ),
          (line) => print.info(`Watching: ${line}`),
        );
  // The summary says the app is up and its folder watched: printed once the watcher has read the folder, so a
  // save made as soon as it shows is a change (a file written during the watcher's first scan would be taken
  // as it is, with no event, and never deployed).
  printSummary(print, app.url, access, cliEnv, endpoint);
  let stopped: Promise<void> | undefined;
  return {
    app: name,
    url: app.url,
    apiUrl: endpoint.apiUrl,
    token: endpoint.token,
    addons: access,
    cliEnv,
    firstDeployment,
    deployments,
    redeploy: () => redeploy('requested'),
    emulator: endpoint.own,
    stop: () =>
      (stopped ??= (async () => {
        await watcher?.close();
        await chain;
        logs?.close();
        await endpoint.close();
      })()),
  };
}

/** What `down` needs to find this run again (up-record.ts), when the emulator keeps its state in a data dir. */
function recordStart(project: Project, endpoint: Endpoint, opts: UpOptions): void {
  if (endpoint.config.inMemory || (!endpoint.own && endpoint.pid === undefined)) return;
  const dataDir = resolve(endpoint.config.dataDir);
  const previous = readUpRecord(dataDir);
  const startedHere =
    opts.emulatorPid !== undefined &&
    (endpoint.own ? opts.emulatorPid === process.pid : endpoint.pid === opts.emulatorPid);
  writeUpRecord(
    {
      dir: project.dir,
      app: project.appName,
      dataDir,
      configFile: opts.configFile ? resolve(opts.configFile) : null,
      port: opts.port ?? null,
      routerPort: opts.routerPort ?? null,
      sshPort: opts.sshPort ?? null,
      apiUrl: endpoint.apiUrl,
      // A background emulator an earlier `up --detach` started is still its to stop.
      emulatorPid: startedHere
        ? (opts.emulatorPid ?? null)
        : previous?.emulatorPid === endpoint.pid
          ? (endpoint.pid ?? null)
          : null,
    },
    opts.env ?? process.env,
  );
}

/** The app's newest successful deployment (the list is newest first), or null. */
async function lastSuccess(api: ApiClient, app: string): Promise<{ id: string; created_at: string } | null> {
  const { deployments } = await api.get<{ deployments: { id: string; status: string; created_at: string }[] }>(
    `/v1/apps/${app}/deployments`,
  );
  return deployments.find((d) => d.status === 'success') ?? null;
}

function printSummary(
  print: LogPrinter,
  url: string,
  access: AddonAccess[],
  cliEnv: Record<string, string>,
  endpoint: Endpoint,
): void {
  print.info(`\n  App         ${url}`);
  for (const a of access) print.info(`  ${a.kind.padEnd(11)} ${a.hint}`);
  print.info(`  Dashboard   ${endpoint.apiUrl}/_emulator/${endpoint.own ? `?token=${endpoint.own.adminToken}` : ''}`);
  print.info(
    `  CLI         export ${Object.entries(cliEnv)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  );
  print.info(`              scalingo login --api-token ${endpoint.token}`);
  print.info(
    endpoint.own
      ? '\n  Ctrl-C stops the app, its addons and the emulator (data kept).\n'
      : '\n  Ctrl-C stops following; the emulator keeps running the app.\n',
  );
}

export type { AddonJson };
