// `scalingo-emulator exec -- <command…>`: Firebase's `emulators:exec` for this platform. Starts an
// emulator (port 0, in memory unless told otherwise), runs the command with the client variables
// pointing at it, passes the command's exit code through, and stops — containers removed.

import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { type Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/load.ts';
import { createEmulator, type Emulator } from '../emulator.ts';
import { createLogger } from '../shared/logger.ts';
import { ensureBaseImageWithProgress, followDeployments, followImageBuilds } from './follow.ts';
import { createProgress } from './progress.ts';

export const EXEC_USAGE = `Usage: scalingo-emulator exec [options] -- <command…>

Starts an emulator, runs the command with SCALINGO_API_URL, SCALINGO_AUTH_URL, SCALINGO_DB_URL,
SCALINGO_REGION, SCALINGO_API_TOKEN (and EMULATOR_API_URL, EMULATOR_API_TOKEN, EMULATOR_ADMIN_TOKEN,
EMULATOR_ROUTER_URL, EMULATOR_GIT_URL) set, stops the emulator and exits with the command's exit code. A single
argument is run by the shell (exec -- 'npm test && npm run lint'); several are run as they are.

Options:
  --port <n>          API port                            [default 0: any free port]
  --router-port <n>   router port                         [default 0: any free port]
  --ssh-port <n>      git endpoint (SSH) port             [default 0: any free port]
  --data-dir <dir>    keep state in this directory        [default: in memory]
  --config <file>     configuration file                  [default emulator.config.json when present]
  --log-level <lvl>   emulator logs, on stderr            [default warn]`;

export interface ExecIo {
  stderr: Writable & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
}

/** Resolves with the exit code of the command (1 when the emulator could not start, 2 for bad usage). */
export async function execCli(
  argv: string[],
  io: ExecIo = { stderr: process.stderr, env: process.env },
): Promise<number> {
  const sep = argv.indexOf('--');
  const command = sep >= 0 ? argv.slice(sep + 1) : [];
  let values;
  try {
    ({ values } = parseArgs({
      args: sep >= 0 ? argv.slice(0, sep) : argv,
      options: {
        port: { type: 'string' },
        'router-port': { type: 'string' },
        'ssh-port': { type: 'string' },
        'data-dir': { type: 'string' },
        config: { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n\n${EXEC_USAGE}\n`);
    return 2;
  }
  if (values.help || !command.length) {
    if (!values.help) io.stderr.write('a command is needed after --\n\n');
    io.stderr.write(`${EXEC_USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const num = (flag: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v)) throw new ConfigError([`flag --${flag}: expected a whole number, got "${v}"`]);
    return Number(v);
  };

  let emu: Emulator;
  let config;
  try {
    config = loadConfig({
      file: values.config,
      env: io.env,
      // Below the config file: a run of tests wants free ports, no state left behind, and the
      // containers it made gone at the end.
      defaults: {
        port: 0,
        routerPort: 0,
        sshPort: 0,
        inMemory: true,
        logLevel: 'warn',
        docker: { stopContainersOnExit: true },
      },
      overrides: {
        port: num('port', values.port),
        routerPort: num('router-port', values['router-port']),
        sshPort: num('ssh-port', values['ssh-port']),
        ...(values['data-dir'] ? { dataDir: values['data-dir'], inMemory: false } : {}),
        logLevel: values['log-level'],
      },
    });
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n`);
    return err instanceof ConfigError ? 2 : 1;
  }
  const logger = createLogger(config.logLevel, 2);
  const progress = createProgress({ stream: io.stderr, logger });
  const starting = progress.start('Starting the Scalingo emulator');
  try {
    emu = createEmulator(config, { logger });
    await emu.start();
    const unfollowDeployments = followDeployments(emu, progress);
    const unfollowImages = followImageBuilds(progress);
    const unfollow = () => (unfollowDeployments(), unfollowImages());
    await emu.ready();
    await ensureBaseImageWithProgress(emu, progress);
    // Bound directories' first deployments end before the command runs against them.
    await emu.area('containers').deployments.idle();
    unfollow();
    starting.done(emu.urls.api);
  } catch (err) {
    starting.fail((err as Error).message);
    if (!progress.tty) io.stderr.write(`cannot start the emulator: ${(err as Error).message}\n`);
    return 1;
  }

  const env = {
    ...io.env,
    SCALINGO_API_URL: emu.urls.api,
    SCALINGO_AUTH_URL: emu.urls.api,
    SCALINGO_DB_URL: emu.urls.api,
    SCALINGO_REGION: config.region.name,
    SCALINGO_API_TOKEN: emu.startupToken,
    EMULATOR_API_URL: emu.urls.api,
    EMULATOR_API_TOKEN: emu.startupToken,
    EMULATOR_ROUTER_URL: emu.urls.router,
    EMULATOR_GIT_URL: emu.urls.git ?? '',
    EMULATOR_ADMIN_TOKEN: emu.adminToken,
  };
  progress.note(`  Running: ${command.join(' ')}`);
  const code = await new Promise<number>((resolve) => {
    const child = spawn(command[0], command.slice(1), { stdio: 'inherit', env, shell: command.length === 1 });
    // Ctrl-C reaches the command (same process group); TERM from a CI runner is passed on.
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    const onInt = forward('SIGINT');
    const onTerm = forward('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    const done = (n: number) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(n);
    };
    child.once('error', (err) => {
      io.stderr.write(`cannot run ${command[0]}: ${err.message}\n`);
      done(127);
    });
    child.once('exit', (status, signal) => done(status ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0)));
  });

  const stopping = progress.start('Stopping the emulator (removing its containers)');
  try {
    // In memory, the apps' containers and images go too (`reset`); with a data dir they stay for the next start.
    if (config.inMemory) await emu.area('control').control.reset();
    await emu.stop();
    stopping.done();
  } catch (err) {
    stopping.fail((err as Error).message);
  }
  return code;
}
