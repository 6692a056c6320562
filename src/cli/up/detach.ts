// `up --detach` when no emulator answers: one is started as its own process (the same command's
// `start`, its output in <data dir>/emulator.log, its pid in <data dir>/up-emulator.pid for `down`),
// with docker.stopContainersOnExit so that stopping it stops the app and its addon servers.
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { probeEmulator, upConfig, type EndpointOptions } from './emulator-endpoint.ts';
import { UpError } from './up-error.ts';

export const PID_FILE = 'up-emulator.pid';
const START_WAIT_MS = 60_000;

/** Starts the background emulator when none answers; resolves with a function stopping it (for a failed `up`), or null. */
export async function detachEmulator(opts: EndpointOptions, say: (line: string) => void): Promise<(() => void) | null> {
  const config = upConfig(opts);
  if (await probeEmulator(config.host, config.port)) return null;
  if (config.inMemory) throw new UpError('--detach keeps state on disk: drop --in-memory');
  const dataDir = resolve(config.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const log = openSync(join(dataDir, 'emulator.log'), 'a');
  const args = [
    ...process.execArgv,
    process.argv[1],
    'start',
    '--port',
    String(config.port),
    '--router-port',
    String(config.routerPort),
    '--ssh-port',
    String(config.sshPort),
    '--data-dir',
    dataDir,
  ];
  if (opts.configFile) args.push('--config', opts.configFile);
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: ['ignore', log, log],
    env: { ...process.env, EMULATOR_STOP_CONTAINERS_ON_EXIT: 'true' },
  });
  child.unref();
  writeFileSync(join(dataDir, PID_FILE), String(child.pid));
  const deadline = Date.now() + START_WAIT_MS;
  while (!(await probeEmulator(config.host, config.port))) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new UpError(`the emulator did not start (see ${join(dataDir, 'emulator.log')})`);
    await new Promise((ok) => setTimeout(ok, 250));
  }
  say(`Emulator started in the background (pid ${child.pid}, log ${join(dataDir, 'emulator.log')})`);
  return () => {
    child.kill('SIGTERM');
    rmSync(join(dataDir, PID_FILE), { force: true });
  };
}
