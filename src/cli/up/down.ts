// `down [DIR]`: stops what `up` left, and with --volumes deletes the app (its addons, their servers and
// volumes go). With an emulator answering on the port: the emulator `up --detach` started is stopped (its
// containers and addon servers stop with it; data stays), another one keeps running with the app scaled
// to 0. With none answering (after a Ctrl-C'd `up`, or a crash), an emulator is started here on the data
// dir, on free ports, to do the same through its API, and stopped (what it runs stops with it).
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { apiClient, type ApiClient } from './api-client.ts';
import { openEndpoint, probeEmulator, upConfig, userToken, type EndpointOptions } from './emulator-endpoint.ts';
import { readProject } from './project.ts';
import { PID_FILE } from './detach.ts';
import { UpError } from './up-error.ts';

export type DownOptions = EndpointOptions & { dir?: string; app?: string; volumes?: boolean };

export async function down(opts: DownOptions, say: (line: string) => void): Promise<void> {
  const { appName } = readProject(opts.dir ?? '.', opts.app);
  const config = upConfig(opts);
  const apiUrl = await probeEmulator(config.host, config.port);
  if (!apiUrl) return downWithoutEmulator(opts, appName, say);
  const { token } = await userToken(apiUrl, config);
  const api = apiClient(apiUrl, token);
  const found = await api.find(`/v1/apps/${appName}`);
  if (opts.volumes && found) await deleteApp(api, appName, say);
  const pidFile = join(resolve(config.dataDir), PID_FILE);
  const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0;
  if (pid > 0 && isAlive(pid)) {
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 60_000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 200));
    rmSync(pidFile, { force: true });
    say(`Stopped the emulator (pid ${pid}) with ${appName}'s containers and addon servers`);
    return;
  }
  if (found && !opts.volumes) {
    const { containers } = await api.get<{ containers: { name: string }[] }>(`/v1/apps/${appName}/containers`);
    if (containers.length)
      await api.send('POST', `/v1/apps/${appName}/scale`, {
        containers: containers.map((c) => ({ name: c.name, amount: 0 })),
      });
    say(`Scaled ${appName} to 0 (the emulator at ${apiUrl} was not started by up: it keeps running)`);
  }
}

/** No emulator answers: one is started on the data dir (free ports, so that nothing else must be free), used, stopped. */
async function downWithoutEmulator(opts: DownOptions, appName: string, say: (line: string) => void): Promise<void> {
  const config = upConfig(opts);
  if (config.inMemory)
    throw new UpError('--in-memory: an emulator in memory keeps nothing once stopped, there is nothing to stop');
  const dataDir = resolve(config.dataDir);
  if (!existsSync(join(dataDir, 'emulator.sqlite'))) {
    say(`Nothing to stop: no emulator answers on port ${config.port} and ${dataDir} holds no emulator state`);
    return;
  }
  rmSync(join(dataDir, PID_FILE), { force: true });
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
