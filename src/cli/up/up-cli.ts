// `scalingo-emulator up [DIR]` and `down [DIR]`: the command lines of up.ts and down.ts. A user's
// mistake is one line on stderr and exit 1; Ctrl-C (SIGINT or SIGTERM) stops cleanly and exits 0.

import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type DetachedEmulator, detachEmulator } from './detach.ts';
import { down } from './down.ts';
import { upConfig } from './emulator-endpoint.ts';
import { stopEmulatorProcess } from './emulator-process.ts';
import { type UpOptions, up } from './up.ts';
import { UpError } from './up-error.ts';

export const UP_USAGE = `Usage: scalingo-emulator up [DIR] [options]     run the folder (default .) as the platform would, redeploy on change
       scalingo-emulator down [DIR] [--volumes]     stop what up started there (the data dir, app and ports up
                                                    recorded; --volumes: also delete the app, its addons and their data)

Options (those of start, plus):
  --app <name>        the app's name                                 [default: the folder's name]
  --detach            leave everything running and return once deployed
  --no-watch          do not redeploy on changes
  --port, --router-port, --ssh-port, --data-dir, --in-memory, --config, --log-level   as for start`;

const OPTIONS = {
  app: { type: 'string' },
  detach: { type: 'boolean' },
  'no-watch': { type: 'boolean' },
  volumes: { type: 'boolean' },
  port: { type: 'string' },
  'router-port': { type: 'string' },
  'ssh-port': { type: 'string' },
  'data-dir': { type: 'string' },
  'in-memory': { type: 'boolean' },
  config: { type: 'string' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `earlySignal`: one received before this module was loaded, acted on as if it came now. */
export async function upCli(command: 'up' | 'down', argv: string[], earlySignal?: NodeJS.Signals): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${UP_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(UP_USAGE);
    return 0;
  }
  if (positionals.length > 1) {
    console.error(`one folder at most (got ${positionals.join(' ')})\n\n${UP_USAGE}`);
    return 2;
  }
  try {
    const num = (flag: string, v: string | undefined) => {
      if (v === undefined) return undefined;
      if (!/^\d+$/.test(v)) throw new UpError(`--${flag}: expected a whole number, got "${v}"`);
      return Number(v);
    };
    const common = {
      dir: positionals[0] ?? '.',
      app: values.app,
      port: num('port', values.port),
      routerPort: num('router-port', values['router-port']),
      sshPort: num('ssh-port', values['ssh-port']),
      dataDir: values['data-dir'],
      inMemory: values['in-memory'],
      configFile: values.config,
      logLevel: values['log-level'],
    };
    if (command === 'down') {
      await down({ ...common, volumes: values.volumes }, (l) => console.log(l));
      return 0;
    }
    return await upCommand(common, positionals[0], Boolean(values.detach), !values['no-watch'], earlySignal);
  } catch (err) {
    if (err instanceof UpError) {
      console.error(`${command}: ${err.message}`);
      return 1;
    }
    console.error(`${command}: ${(err as Error).message}`);
    return 1;
  }
}

/**
 * `up` with the stop that wins: SIGINT/SIGTERM are caught from the first moment; the first aborts
 * whatever is under way (nothing new starts, the emulator `up` started stops with the app's containers
 * and addon servers) and exits 0; a second one exits at once, saying what may be left and how to remove it.
 */
async function upCommand(
  common: UpOptions,
  dirArg: string | undefined,
  detach: boolean,
  watch: boolean,
  earlySignal?: NodeJS.Signals,
): Promise<number> {
  const stop = new AbortController();
  const downLine = `scalingo-emulator down${dirArg ? ` ${shellWord(dirArg)}` : ''}`;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      console.error(
        `\n${signal} again: exiting now. The app's containers and addon servers, and the emulator, may still run: \`${downLine}\` stops them.`,
      );
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    stopping = true;
    console.log(`\n${signal}: stopping…`);
    stop.abort(new UpError(`stopped by ${signal}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  if (earlySignal) onSignal(earlySignal);
  let detached: DetachedEmulator | null = null;
  const dataDir = resolve(upConfig(common).dataDir);
  try {
    // Detached: the emulator runs as its own process, so that it outlives this one.
    detached = detach ? await detachEmulator(common, (l) => console.log(l), stop.signal) : null;
    const handle = await up({
      ...common,
      watch: watch && !detach,
      logs: !detach,
      signal: stop.signal,
      emulatorPid: detached?.pid ?? process.pid,
    });
    if (detach && !stop.signal.aborted) {
      await handle.stop();
      console.log(`Detached: ${handle.url} keeps running. \`${downLine}\` stops it.`);
      return 0;
    }
    if (!stop.signal.aborted) await new Promise((ok) => stop.signal.addEventListener('abort', ok, { once: true }));
    await handle.stop();
    if (detached) await stopEmulatorProcess(detached.pid, dataDir);
    return 0;
  } catch (err) {
    // A failed or stopped `up --detach` leaves no emulator of its own behind.
    if (detached) await stopEmulatorProcess(detached.pid, dataDir);
    if (stop.signal.aborted) return 0;
    throw err;
  }
}

/** A folder as the shell reads it back: quoted when it holds anything but plain characters. */
function shellWord(word: string): string {
  return /^[\w./~-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
