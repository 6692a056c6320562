// `down [DIR]`: stops what `up --detach` left running. The emulator `up` started in the background is
// stopped (its containers and addon servers stop with it; data stays); with --volumes the app is
// deleted first (its addons, their servers and volumes go). An emulator `up` did not start keeps
// running: the app's processes are scaled to 0 there.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { apiClient } from './api-client.ts';
import { probeEmulator, upConfig, userToken, type EndpointOptions } from './emulator-endpoint.ts';
import { readProject } from './project.ts';
import { PID_FILE } from './detach.ts';
import { UpError } from './up-error.ts';

export async function down(opts: EndpointOptions & { dir?: string; app?: string; volumes?: boolean }, say: (line: string) => void): Promise<void> {
  const { appName } = readProject(opts.dir ?? '.', opts.app);
  const config = upConfig(opts);
  const apiUrl = await probeEmulator(config.host, config.port);
  if (!apiUrl) throw new UpError(`no emulator answers on port ${config.port}: nothing to stop`);
  const { token } = await userToken(apiUrl, config);
  const api = apiClient(apiUrl, token);
  const found = await api.find(`/v1/apps/${appName}`);
  if (opts.volumes && found) {
    await api.send('DELETE', `/v1/apps/${appName}?current_name=${appName}`);
    say(`Deleted ${appName}, its addons and their data`);
  }
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
    if (containers.length) await api.send('POST', `/v1/apps/${appName}/scale`, { containers: containers.map((c) => ({ name: c.name, amount: 0 })) });
    say(`Scaled ${appName} to 0 (the emulator at ${apiUrl} was not started by up: it keeps running)`);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
