#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { applyRuntimeV8Flags } from './boot/v8-flags.ts';
import { ensureBaseImageWithProgress, followDeployments, followImageBuilds } from './cli/follow.ts';
import { createProgress } from './cli/progress.ts';
import { ConfigError, loadConfig } from './config/load.ts';
import { DataDirInUseError } from './db/data-dir-lock.ts';
import { createEmulator, VERSION } from './emulator.ts';
import { missingRecipeImages } from './runtime/recipe-images.ts';
import { createLogger, type Logger } from './shared/logger.ts';

const USAGE = `Usage: scalingo-emulator [start] [options]
       scalingo-emulator run <app> [--api URL] [--token TOKEN] -- <command…>   (run --help for more)
       scalingo-emulator exec [options] -- <command…>   start, run the command against it, stop (exec --help)
       scalingo-emulator up [DIR] | down [DIR]   run a project folder as the platform would (up --help)

Options:
  --port <n>          API, auth and logs port (0 = any free port)       [default 5100]
  --router-port <n>   router port, http://<app>.localhost:<n>           [default 5180]
  --ssh-port <n>      SSH git endpoint, ssh://git@<host>:<n>/<app>.git  [default 5122]
  --host <addr>       address to listen on                              [default 127.0.0.1]
  --public-host <name>  host name of the URLs handed out (a compose service name) [default: --host]
  --data-dir <dir>    where the SQLite file and state live              [default .emulator-data]
  --in-memory         keep state in memory (nothing written to disk)
  --config <file>     configuration file                                [default emulator.config.json]
  --log-level <lvl>   fatal|error|warn|info|debug|trace|silent          [default info]
  --admin-token <t>   token of the control plane /_emulator/* (≥ 16 chars) [default: random per start]
  --clock <mode>      system|manual (manual: POST /_emulator/clock/advance moves time) [default system]
  --import <file>     start from a snapshot file (GET /_emulator/snapshots/:id)
  --export-on-exit <file>  write a snapshot file when the emulator stops
  --docker-host <url>       the engine: unix:///path or tcp://host:2376    [default DOCKER_HOST, else the local socket]
  --docker-cert-path <dir>  ca.pem, cert.pem, key.pem for a tcp:// engine  [default DOCKER_CERT_PATH]
  --docker-publish-host <ip>  where published container ports are reached [default 127.0.0.1]
  --docker-network <name>  a user-defined network the emulator's container is on: apps are reached there, not published
  --images-source <s>  auto|registry|debian: where missing stack and addon images come from [default auto]
  -v, --version       the version, and the Node.js and platform it runs on
  -h, --help          this help

Precedence: defaults < config file < EMULATOR_* environment variables < flags.`;

async function main(argv: string[]): Promise<number> {
  // A client command: a one-off container with this terminal attached (src/cli/run.ts).
  if (argv[0] === 'run') return (await import('./cli/run.ts')).runCli(argv.slice(1));
  // An emulator for the length of one command (tests in CI): src/cli/exec.ts.
  if (argv[0] === 'exec') return (await import('./cli/exec.ts')).execCli(argv.slice(1));
  // A project folder running as the platform would run it (src/cli/up/).
  if (argv[0] === 'up' || argv[0] === 'down') {
    // A signal while the command's modules load is handed to it (its own handlers take over), not the default exit.
    const early: NodeJS.Signals[] = [];
    const keep = (signal: NodeJS.Signals) => void early.push(signal);
    process.on('SIGINT', keep).on('SIGTERM', keep);
    const { upCli } = await import('./cli/up/up-cli.ts');
    process.off('SIGINT', keep).off('SIGTERM', keep);
    return upCli(argv[0], argv.slice(1), early[0]);
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: 'string' },
        'router-port': { type: 'string' },
        'ssh-port': { type: 'string' },
        host: { type: 'string' },
        'public-host': { type: 'string' },
        'data-dir': { type: 'string' },
        'in-memory': { type: 'boolean' },
        config: { type: 'string' },
        'log-level': { type: 'string' },
        'admin-token': { type: 'string' },
        clock: { type: 'string' },
        import: { type: 'string' },
        'export-on-exit': { type: 'string' },
        'docker-host': { type: 'string' },
        'docker-cert-path': { type: 'string' },
        'docker-publish-host': { type: 'string' },
        'docker-network': { type: 'string' },
        'images-source': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const command = positionals[0] ?? 'start';
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  // Node.js and the platform too: which build of the single executable this is (npm run build:exe, one per arch).
  if (values.version) {
    console.log(`scalingo-emulator ${VERSION} (Node.js ${process.version}, ${process.platform}-${process.arch})`);
    return 0;
  }
  if (command !== 'start') {
    console.error(`unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }

  const num = (flag: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v)) throw new ConfigError([`flag --${flag}: expected a whole number, got "${v}"`]);
    return Number(v);
  };

  const t0 = performance.now();
  let emulator;
  let logger!: Logger;
  try {
    const config = loadConfig({
      file: values.config,
      overrides: {
        port: num('port', values.port),
        routerPort: num('router-port', values['router-port']),
        sshPort: num('ssh-port', values['ssh-port']),
        host: values.host,
        publicHost: values['public-host'],
        dataDir: values['data-dir'],
        inMemory: values['in-memory'],
        logLevel: values['log-level'],
        adminToken: values['admin-token'],
        clock: values.clock,
        importFile: values.import,
        exportOnExit: values['export-on-exit'],
        docker: {
          host: values['docker-host'],
          publishHost: values['docker-publish-host'],
          network: values['docker-network'],
          ...(values['docker-cert-path'] ? { tls: { certPath: values['docker-cert-path'] } } : {}),
        },
        images: { source: values['images-source'] },
      },
    });
    logger = createLogger(config.logLevel);
    emulator = createEmulator(config, { logger });
    await emulator.start();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 1;
    }
    if (err instanceof DataDirInUseError) {
      console.error(`cannot start: ${err.message}`);
      return 1;
    }
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') {
      console.error(
        `cannot listen: address already in use ` +
          `(${(e as NodeJS.ErrnoException & { address?: string; port?: number }).address}:${(e as { port?: number }).port}); ` +
          `choose another --port / --router-port / --ssh-port, or 0 for any free port`,
      );
      return 1;
    }
    console.error(`cannot start: ${e.message}`);
    return 1;
  }

  const { urls, config } = emulator;
  const user = config.users[0];
  console.log(
    [
      `Scalingo emulator ${VERSION} ready in ${Math.round(performance.now() - t0)} ms`,
      `  API, auth and logs  ${urls.api}`,
      `  Router              http://<app>.localhost:${urls.routerPort}`,
      `  Git (SSH)           ${urls.git ?? 'off'}/<app>.git`,
      `  Data                ${emulator.dataDir ? emulator.db.name : 'in memory (--in-memory)'}`,
      `  User                ${user.username} <${user.email}>`,
      `  API token           ${emulator.startupToken}`,
      `  Admin token         ${emulator.adminToken}  (control plane ${urls.api}/_emulator/…)`,
      `  Dashboard           ${urls.api}/_emulator/?token=${emulator.adminToken}`,
      ...(config.clock === 'manual' ? [`  Clock               manual (POST /_emulator/clock/advance {"ms": N})`] : []),
      '',
      `  Try: curl -s -u ":${emulator.startupToken}" -X POST ${urls.api}/v1/tokens/exchange`,
    ].join('\n'),
  );
  // Reconciliation with Docker, log collection and bound directories go on after the API answers;
  // the first base-image build and deployments show progress on a terminal (src/cli/follow.ts).
  const progress = createProgress({ stream: process.stdout, logger });
  followDeployments(emulator, progress);
  followImageBuilds(progress);
  emulator.ready().then(
    async () => {
      console.log(`  Containers reconciled and watched (${Math.round(performance.now() - t0)} ms)`);
      await ensureBaseImageWithProgress(emulator, progress);
      // Debian-based stacks and addon servers (issue #15) are built on first use: say which are missing.
      missingRecipeImages(emulator.runtime).then(
        (missing) =>
          missing.length &&
          console.log(
            `  Not built yet: ${missing.join(', ')} — each is made the first time an app or addon needs it, from the engine's ` +
              `registry or Debian's packages (images.source ${emulator.config.images.source}) ` +
              '(about a minute each), or ahead with `npm run images`',
          ),
        () => undefined,
      );
    },
    (err: Error) => console.error(`start-up work failed: ${err.message}`),
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping (in-flight requests finish first)…`);
    await emulator.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  return -1; // keep running
}

// The command's own process (not the programmatic API's, which lives in its host's process): src/boot/v8-flags.ts.
applyRuntimeV8Flags();

main(process.argv.slice(2)).then((code) => {
  if (code >= 0) process.exit(code);
});
