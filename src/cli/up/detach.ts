// `up --detach` when no emulator runs: one is started as its own process (the same command's
// `start`, its output in <data dir>/emulator.log), with docker.stopContainersOnExit so that stopping it
// stops the app and its addon servers. It is ready once it holds the data dir and answers there
// (any --port, 0 included); `up` records its pid for `down` (up-record.ts).
import { spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { dataDirHolder } from '../../db/data-dir-lock.ts';
import { type EndpointOptions, runningEmulator, upConfig } from './emulator-endpoint.ts';
import { UpError } from './up-error.ts';

const START_WAIT_MS = 60_000;

export interface DetachedEmulator {
  pid: number;
  /** Stops it (a failed `up`, or a stop asked for while it started). */
  stop(): void;
}

/** Starts the background emulator when none runs on the data dir or the port; null when one does. */
export async function detachEmulator(
  opts: EndpointOptions,
  say: (line: string) => void,
  signal?: AbortSignal,
): Promise<DetachedEmulator | null> {
  signal?.throwIfAborted();
  const config = upConfig(opts);
  if (config.inMemory) throw new UpError('--detach keeps state on disk: drop --in-memory');
  if (await runningEmulator(config)) return null;
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
  const pid = child.pid;
  if (pid === undefined) throw new UpError(`the emulator did not start (see ${join(dataDir, 'emulator.log')})`);
  const detached = { pid, stop: () => void child.kill('SIGTERM') };
  const deadline = Date.now() + START_WAIT_MS;
  for (;;) {
    if (signal?.aborted) {
      detached.stop();
      throw signal.reason;
    }
    const holder = dataDirHolder(dataDir);
    if (holder?.pid === pid && holder.api && (await runningEmulator(config))) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      detached.stop();
      throw new UpError(`the emulator did not start (see ${join(dataDir, 'emulator.log')})`);
    }
    await new Promise((ok) => setTimeout(ok, 250));
  }
  say(`Emulator started in the background (pid ${pid}, log ${join(dataDir, 'emulator.log')})`);
  return detached;
}
