// The emulator as a separate process (src/main.ts through tsx), as a user starts it: the
// reliability suite kills it, restarts it on the same data directory and reads its memory from
// /proc. Talks to it with plain fetch and the test users' fixed API tokens.
import { type ChildProcess, type ChildProcessByStdio, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Readable } from 'node:stream';
import { Agent, fetch } from 'undici';
import { TEST_USERS, TOKENS } from '../harness.ts';
import { FREE_PORT_FLAGS } from '../support/free-port.ts';

const ROOT = resolve(import.meta.dirname, '../..');
// Idle connections are dropped well before the server's keep-alive timeout (5 s): a request never
// goes out on a connection the server is closing at that moment (seen under load as "other side closed").
const dispatcher = new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 });

export interface EmulatorProcess {
  proc: ChildProcess;
  pid: number;
  api: string;
  /** Everything the process printed (stdout and stderr), for failure messages. */
  output(): string;
  call(
    method: string,
    path: string,
    opts?: { body?: unknown; as?: keyof typeof TOKENS | null; signal?: AbortSignal },
  ): Promise<{ status: number; body: any; text: string }>;
  /** Current and peak resident memory, in bytes (VmRSS, VmHWM of /proc/<pid>/status). */
  memory(): { rss: number; peak: number };
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Writes `<dataDir>/emulator.config.json` and starts the emulator on free ports (`command`: another way to run it than
 * src/main.ts through tsx, such as the single executable).
 */
export async function spawnEmulator(
  dataDir: string,
  config: Record<string, unknown> = {},
  command?: StartCommand,
): Promise<EmulatorProcess> {
  const configFile = join(dataDir, 'emulator.config.json');
  writeFileSync(configFile, JSON.stringify({ users: TEST_USERS, logLevel: 'warn', ...config }));
  const proc = spawnStart(dataDir, ['--config', configFile], command);
  let out = '';
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const api = await new Promise<string>((ok, fail) => {
    const bound = command?.startTimeoutMs ?? 30_000;
    const t = setTimeout(() => fail(new Error(`the emulator did not start within ${bound / 1000} s:\n${out}`)), bound);
    const take = (c: Buffer) => {
      out = (out + c.toString()).slice(-200_000);
      const m = /API, auth and logs\s+(http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        ok(m[1]);
      }
    };
    proc.stdout!.on('data', take);
    proc.stderr!.on('data', take);
    proc.once('exit', (code) => {
      clearTimeout(t);
      fail(new Error(`the emulator exited (${code}) before answering:\n${out}`));
    });
  });
  const pid = proc.pid!;
  const readKb = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  };
  return {
    proc,
    pid,
    api,
    output: () => out,
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { accept: 'application/json' };
      const as = o.as === undefined ? 'dev' : o.as;
      if (as) headers.authorization = `Basic ${Buffer.from(`:${TOKENS[as]}`).toString('base64')}`;
      let body: string | undefined;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] = 'application/json';
      }
      const res = await fetch(`${api}${path}`, { method, headers, body, signal: o.signal, dispatcher });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, body: parsed, text };
    },
    memory: () => ({ rss: readKb('VmRSS'), peak: readKb('VmHWM') }),
    async kill9() {
      proc.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}

export const MB = 1024 * 1024;
export const mb = (n: number) => `${Math.round(n / MB)} MB`;

/** Polls the start-up work: reconciliation is done once `ps` answers and matches `expect`. */
export async function poll<T>(
  fn: () => Promise<T | null | undefined | false>,
  what: string,
  timeoutMs = 60_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The program run for `start` and its environment (default: src/main.ts through tsx, with the test's environment). */
export interface StartCommand {
  argv: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** How long it may take to print its API address (default 30 s; an executable run under QEMU takes longer). */
  startTimeoutMs?: number;
}

const FROM_SOURCES: StartCommand = {
  argv: [process.execPath, '--import', 'tsx', join(ROOT, 'src/main.ts')],
  env: { ...process.env, NODE_OPTIONS: '' },
};

/** `start` on `dataDir` as a process of its own, on free ports (`extra`: more flags), as a user runs it. */
export function spawnStart(
  dataDir: string,
  extra: string[] = [],
  command: StartCommand = FROM_SOURCES,
): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(
    command.argv[0],
    [...command.argv.slice(1), 'start', ...extra, '--data-dir', dataDir, ...FREE_PORT_FLAGS],
    { cwd: command.cwd ?? ROOT, env: { ...command.env, EMULATOR_CONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
}
