// `down [DIR]`: stops what `up` left, and with --volumes deletes the app (its addons, their servers and
// volumes go). What `up` started is read from its record (up-record.ts: the data dir, the app, the
// configuration, the emulator's process), so `down DIR` needs no other flag. The emulator running on
// the data dir (one process per data dir) is stopped when `up` started it (a background one, or a
// foreground `up`, which then exits 0), and kept with the app scaled to 0 otherwise. With none running
// (after a crash), an emulator is opened here on the data dir, on free ports, to do the same through its
// API, and closed (what it runs stops with it).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { dataDirHolder } from '../../db/data-dir-lock.ts';
import { type ApiClient, apiClient } from './api-client.ts';
import { type EndpointOptions, openEndpoint, probeEmulator, upConfig, userToken } from './emulator-endpoint.ts';
import { stopEmulatorProcess } from './emulator-process.ts';
import { readProject } from './project.ts';
import { UpError } from './up-error.ts';
import { readUpRecord, recordedDataDir, type UpRecord, writeUpRecord } from './up-record.ts';

export type DownOptions = EndpointOptions & { dir?: string; app?: string; volumes?: boolean };

export async function down(opts: DownOptions, say: (line: string) => void): Promise<void> {
  const env = opts.env ?? process.env;
  const dir = resolve(opts.dir ?? '.');
  if (opts.inMemory)
    throw new UpError('--in-memory: an emulator in memory keeps nothing once stopped, there is nothing to stop');
  const dataDir = resolve(opts.dataDir ?? recordedDataDir(dir, env) ?? upConfig(opts).dataDir);
  const found = readUpRecord(dataDir);
  const record = found?.dir === dir ? found : null;
  const appName = opts.app ?? record?.app ?? readProject(dir).appName;
  // The record's configuration (its users' passwords make the token) unless another is given.
  const withRecord: DownOptions = {
    ...opts,
    dataDir,
    configFile: opts.configFile ?? record?.configFile ?? undefined,
    port: opts.port ?? record?.port ?? undefined,
  };
  const config = upConfig(withRecord);
  const holder = dataDirHolder(dataDir);
  if (holder) return downRunning(withRecord, record, holder.pid, holder.api, appName, say);
  if (existsSync(join(dataDir, 'emulator.sqlite'))) return downWithoutEmulator(withRecord, appName, say);
  // No state there: an emulator answering on the port (another data dir, or in memory) may run the app.
  const apiUrl = await probeEmulator(config.host, config.port);
  if (!apiUrl) {
    say(`Nothing to stop: no emulator answers on port ${config.port} and ${dataDir} holds no emulator state`);
    return;
  }
  await downThroughApi(apiClient(apiUrl, (await userToken(apiUrl, config)).token), apiUrl, appName, opts, say);
}

/** The emulator holding the data dir: stopped when `up` started it, kept otherwise. */
async function downRunning(
  opts: DownOptions,
  record: UpRecord | null,
  pid: number,
  holderApi: string | null,
  appName: string,
  say: (line: string) => void,
): Promise<void> {
  const config = upConfig(opts);
  const dataDir = resolve(config.dataDir);
  const apiUrl = holderApi && (await probeEmulator(config.host, Number(new URL(holderApi).port)));
  const startedByUp = record?.emulatorPid === pid;
  if (apiUrl) {
    const api = apiClient(apiUrl, (await userToken(apiUrl, config)).token);
    if (!startedByUp) return downThroughApi(api, apiUrl, appName, opts, say);
    if (opts.volumes && (await api.find(`/v1/apps/${appName}`))) await deleteApp(api, appName, say);
  } else if (!startedByUp) {
    throw new UpError(`the emulator of pid ${pid} holds ${dataDir} but does not answer on its API: stop it first`);
  }
  const how = await stopEmulatorProcess(pid, dataDir);
  if (record) writeUpRecord({ ...record, emulatorPid: null }, opts.env ?? process.env);
  if (how === 'killed') {
    // It did not stop in time: what it ran is stopped by an emulator opened on the data dir.
    say(`The emulator (pid ${pid}) did not stop in time: killed`);
    return downWithoutEmulator(opts, appName, say);
  }
  say(`Stopped the emulator (pid ${pid}) with ${appName}'s containers and addon servers`);
}

/** An emulator `up` did not start: the app is scaled to 0 (or deleted), the emulator keeps running. */
async function downThroughApi(
  api: ApiClient,
  apiUrl: string,
  appName: string,
  opts: DownOptions,
  say: (line: string) => void,
): Promise<void> {
  const found = await api.find(`/v1/apps/${appName}`);
  if (!found) {
    say(`No app ${appName} on the emulator at ${apiUrl}`);
    return;
  }
  if (opts.volumes) return deleteApp(api, appName, say);
  const { containers } = await api.get<{ containers: { name: string }[] }>(`/v1/apps/${appName}/containers`);
  if (containers.length)
    await api.send('POST', `/v1/apps/${appName}/scale`, {
      containers: containers.map((c) => ({ name: c.name, amount: 0 })),
    });
  say(`Scaled ${appName} to 0 (the emulator at ${apiUrl} was not started by up: it keeps running)`);
}

/** No emulator runs on the data dir: one is opened here (free ports, so that nothing else must be free), used, closed. */
async function downWithoutEmulator(opts: DownOptions, appName: string, say: (line: string) => void): Promise<void> {
  const dataDir = resolve(upConfig(opts).dataDir);
  const endpoint = await openEndpoint({ ...opts, port: 0, routerPort: 0, sshPort: 0 }, () => undefined);
  try {
    const api = apiClient(endpoint.apiUrl, endpoint.token);
    const found = await api.find(`/v1/apps/${appName}`);
    if (!found) say(`No app ${appName} in ${dataDir}`);
    else if (opts.volumes) await deleteApp(api, appName, say);
  } finally {
    // It runs with docker.stopContainersOnExit: whatever of the data dir still ran (a crashed `up`) stops with it.
    await endpoint.close();
  }
  if (!opts.volumes)
    say(`Stopped ${appName}'s containers and addon servers (no emulator was running; data kept in ${dataDir})`);
}

async function deleteApp(api: ApiClient, appName: string, say: (line: string) => void): Promise<void> {
  await api.send('DELETE', `/v1/apps/${appName}?current_name=${appName}`);
  say(`Deleted ${appName}, its addons and their data`);
}
