// `scalingo-emulator up [DIR]` and `down [DIR]`: the command lines of up.ts and down.ts. A user's
// mistake is one line on stderr and exit 1; Ctrl-C (SIGINT or SIGTERM) stops cleanly and exits 0.
import { parseArgs } from 'node:util';
import { up } from './up.ts';
import { down } from './down.ts';
import { detachEmulator } from './detach.ts';
import { UpError } from './up-error.ts';

export const UP_USAGE = `Usage: scalingo-emulator up [DIR] [options]     run the folder (default .) as the platform would, redeploy on change
       scalingo-emulator down [DIR] [--volumes]     stop it, with or without an emulator running (--volumes: also delete the app, its addons and their data)

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

export async function upCli(command: 'up' | 'down', argv: string[]): Promise<number> {
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
    // Detached: the emulator runs as its own process, so that it outlives this one.
    const stopDetached = values.detach ? await detachEmulator(common, (l) => console.log(l)) : null;
    let handle;
    try {
      handle = await up({ ...common, watch: !values['no-watch'] && !values.detach, logs: !values.detach });
    } catch (err) {
      // A failed `up --detach` leaves no emulator of its own behind.
      stopDetached?.();
      throw err;
    }
    if (values.detach) {
      await handle.stop();
      console.log(
        `Detached: ${handle.url} keeps running. \`scalingo-emulator down${positionals[0] ? ` ${positionals[0]}` : ''}\` stops it.`,
      );
      return 0;
    }
    return await new Promise<number>((done) => {
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        console.log(`\n${signal}: stopping…`);
        handle.stop().then(
          () => done(0),
          (err: Error) => (console.error(`stopping: ${err.message}`), done(1)),
        );
      };
      process.on('SIGINT', () => stop('SIGINT'));
      process.on('SIGTERM', () => stop('SIGTERM'));
    });
  } catch (err) {
    if (err instanceof UpError) {
      console.error(`${command}: ${err.message}`);
      return 1;
    }
    console.error(`${command}: ${(err as Error).message}`);
    return 1;
  }
}
