// Which emulator `up` drives: the one holding the data dir (one process per data dir:
// src/db/data-dir-lock.ts), else one answering on the port (any emulator: it is reached through its
// API, with a token of the configured user), or its own, started in this process and stopped with it
// (containers and addon servers stop too; their data stays in the data dir).
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from '../../config/load.ts';
import { type EmulatorConfig } from '../../config/schema.ts';
import { DataDirInUseError, dataDirHolder } from '../../db/data-dir-lock.ts';
import { createEmulator, type Emulator } from '../../emulator.ts';
import { createLogger } from '../../shared/logger.ts';
import { UpError } from './up-error.ts';

export interface EndpointOptions {
  /** API port: an emulator answering there is used, otherwise one is started on it (default: the config's, 5100). */
  port?: number;
  routerPort?: number;
  sshPort?: number;
  /** Where the started emulator keeps its state (default: the config's, .emulator-data). */
  dataDir?: string;
  inMemory?: boolean;
  /** A configuration file (default: emulator.config.json in the working directory when present). */
  configFile?: string;
  /** pino level of the started emulator's logs, on stderr (default 'warn'). */
  logLevel?: string;
  /** The environment read for EMULATOR_* settings and `required` variables (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface Endpoint {
  apiUrl: string;
  routerPort: number;
  token: string;
  config: EmulatorConfig;
  /** The process of the emulator already running on the data dir, when `up` uses it. */
  pid?: number;
  /** This process's emulator; undefined when another one was already answering. */
  own?: Emulator;
  /** Stops the own emulator (nothing for another one) and drops the token made for this run. */
  close(): Promise<void>;
}

export function upConfig(opts: EndpointOptions): EmulatorConfig {
  try {
    return loadConfig({
      file: opts.configFile,
      env: opts.env ?? process.env,
      // Below the file: the emulator `up` starts stops its containers with it (Ctrl-C stops the app).
      defaults: { logLevel: 'warn', docker: { stopContainersOnExit: true } },
      overrides: {
        port: opts.port,
        routerPort: opts.routerPort,
        sshPort: opts.sshPort,
        ...(opts.dataDir ? { dataDir: opts.dataDir, inMemory: false } : {}),
        ...(opts.inMemory ? { inMemory: true } : {}),
        logLevel: opts.logLevel,
      },
    });
  } catch (err) {
    if (err instanceof ConfigError) throw new UpError(err.message.replace(/\n/g, '; '));
    throw err;
  }
}

/** The API URL of an emulator answering on 127.0.0.1:port, or null when none does. */
export async function probeEmulator(host: string, port: number): Promise<string | null> {
  if (!port) return null;
  return probeUrl(`http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`);
}

const HOLDER_WAIT_MS = 30_000;

export interface RunningEmulator {
  apiUrl: string;
  routerPort: number;
  /** Known when it holds the data dir. */
  pid?: number;
}

/**
 * The emulator already running for these options: the process holding the data dir (waited for while
 * it starts; an error when it never answers), else one answering on the port. Null when none runs.
 */
export async function runningEmulator(config: EmulatorConfig): Promise<RunningEmulator | null> {
  if (!config.inMemory) {
    const dataDir = resolve(config.dataDir);
    const deadline = Date.now() + HOLDER_WAIT_MS;
    for (let holder = dataDirHolder(dataDir); holder; holder = dataDirHolder(dataDir)) {
      const apiUrl = holder.api && (await probeUrl(holder.api.replace('//0.0.0.0:', '//127.0.0.1:')));
      if (apiUrl) return { apiUrl, routerPort: holder.routerPort ?? config.routerPort, pid: holder.pid };
      if (Date.now() > deadline)
        throw new UpError(
          `the data dir ${dataDir} is in use by the emulator of pid ${holder.pid}, which does not answer on its API: stop it first`,
        );
      await new Promise((ok) => setTimeout(ok, 250));
    }
  }
  const apiUrl = await probeEmulator(config.host, config.port);
  return apiUrl ? { apiUrl, routerPort: config.routerPort } : null;
}

async function probeUrl(url: string): Promise<string | null> {
  // A timer that holds the process, unlike AbortSignal.timeout's: a program on the port that drops the connection
  // left the probe's fetch pending with nothing else alive, and the command exited 0 there, silently (seen running
  // dist/main.mjs with stdin closed; tsx's own handles had kept the process alive).
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error('no answer within 1.5 s')), 1500);
  try {
    const res = await fetch(`${url}/_emulator/health`, { signal: abort.signal });
    const body = (await res.json().catch(() => null)) as { status?: string; database?: unknown } | null;
    return body && typeof body === 'object' && 'status' in body ? url : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** An API token of the configured first user, made with its password (POST /v1/tokens). */
export async function userToken(apiUrl: string, config: EmulatorConfig): Promise<{ token: string; id: string }> {
  const u = config.users[0];
  const res = await fetch(`${apiUrl}/v1/tokens`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${u.username}:${u.password}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ token: { name: 'scalingo-emulator up' } }),
    signal: AbortSignal.timeout(10_000),
  }).catch((err: Error) => {
    throw new UpError(`the emulator at ${apiUrl} does not answer (${err.message})`);
  });
  if (!res.ok)
    throw new UpError(
      `the emulator at ${apiUrl} refuses the user ${u.username} of this configuration (${res.status}): use its --config, or another --port`,
    );
  const { token } = (await res.json()) as { token: { token: string; id: string } };
  return token;
}

export async function openEndpoint(opts: EndpointOptions, say: (line: string) => void): Promise<Endpoint> {
  const config = upConfig(opts);
  const running = await runningEmulator(config);
  if (running) {
    const existing = running.apiUrl;
    const made = await userToken(existing, config);
    say(`Using the emulator already running at ${existing}${running.pid ? ` (pid ${running.pid})` : ''}`);
    return {
      apiUrl: existing,
      routerPort: running.routerPort,
      token: made.token,
      config,
      pid: running.pid,
      close: () => dropToken(existing, config, made.id),
    };
  }
  let emulator: Emulator;
  try {
    emulator = createEmulator(config, { logger: createLogger(config.logLevel, 2) });
  } catch (err) {
    // Another process took the data dir since it was looked at.
    if (err instanceof DataDirInUseError) throw new UpError(err.message);
    throw err;
  }
  try {
    await emulator.start();
  } catch (err) {
    await emulator.stop().catch(() => undefined);
    const e = err as NodeJS.ErrnoException & { port?: number };
    if (e.code === 'EADDRINUSE')
      throw new UpError(
        `port ${e.port ?? '?'} is in use by another program: choose another --port / --router-port / --ssh-port`,
      );
    throw new UpError(`cannot start the emulator: ${e.message}`);
  }
  say(`Emulator started at ${emulator.urls.api} (data: ${emulator.dataDir ?? 'in memory'})`);
  await emulator.ready();
  return {
    apiUrl: emulator.urls.api,
    routerPort: emulator.urls.routerPort,
    token: emulator.startupToken,
    config,
    own: emulator,
    // In memory, nothing could find this emulator's apps again: their containers and images go with it (as startEmulator does).
    close: async () => {
      if (config.inMemory)
        await emulator
          .area('control')
          .control.reset()
          .catch(() => undefined);
      await emulator.stop();
    },
  };
}

/** The token made for this run goes with it (DELETE /v1/tokens/:id takes the password). */
async function dropToken(apiUrl: string, config: EmulatorConfig, id: string): Promise<void> {
  const u = config.users[0];
  await fetch(`${apiUrl}/v1/tokens/${id}`, {
    method: 'DELETE',
    headers: { authorization: `Basic ${Buffer.from(`${u.username}:${u.password}`).toString('base64')}` },
    signal: AbortSignal.timeout(5000),
  }).catch(() => undefined);
}
