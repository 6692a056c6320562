import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { startCommand } from './start-options.ts';

/**
 * Servers under test run in child processes started the same way (`node --import tsx`), so the
 * load generator in the driver never shares an event loop with them, and neither server gets
 * an advantage from how it is loaded.
 */

export interface Child {
  kind: 'emulator' | 'hello' | 'node';
  api: string;
  /** The emulator's printed API token (emulator only). */
  token: string | null;
  /** From spawn() to the line saying where it listens. */
  readyMs: number;
  spawnedAt: number;
  proc: ChildProcess;
  /** Everything printed on stdout so far. */
  output(): string;
  /** Everything printed on stderr so far (where Node's --inspect prints its URL). */
  errors(): string;
  stop(): Promise<void>;
}

export interface EmulatorSpawn {
  emulatorDir: string;
  /** null: --in-memory. */
  dataDir: string | null;
  profileDir?: string | null;
  env?: Record<string, string>;
  /** Start the esbuild bundle `npm start` runs instead of the sources through tsx. */
  bundled?: boolean;
  /** Options for node itself, before the entry (e.g. --inspect=127.0.0.1:0). */
  nodeArgs?: string[];
  /** The single executable (`npm run build:exe`) to run instead of node: no entry, node options or profile. */
  executable?: string;
}

// The emulator's start banner (src/main.ts).
const API_LINE = /API, auth and logs\s+(http:\/\/\S+)/;
const TOKEN_LINE = /API token\s+(\S+)/;
const HELLO_LINE = /listening (http:\/\/\S+)/;

// Children still running when the driver exits (a section crashed, an uncaught error) are killed with it,
// so no server is left behind holding a port and a CPU.
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // EMULATOR_* variables of the caller's shell would change what is measured.
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('EMULATOR_')) env[k] = v;
  // A rate limit would turn the load into 429s; the default config has it off, this makes sure.
  env.EMULATOR_RATE_LIMIT = 'false';
  return { ...env, ...extra };
}

export function spawnEmulator(o: EmulatorSpawn): Promise<Child> {
  const store = o.dataDir ? ['--data-dir', o.dataDir] : ['--in-memory'];
  const prof = o.profileDir ? ['--cpu-prof', '--cpu-prof-dir', o.profileDir] : [];
  // bundled: what `npm start` runs (dist/main.mjs, built by scripts/build.mjs, with the environment and node options of
  // its start script); otherwise the sources through tsx.
  const command = o.bundled ? startCommand(o.emulatorDir) : { env: {}, nodeOptions: [] };
  const entry = o.bundled
    ? [...command.nodeOptions, join(o.emulatorDir, 'dist/main.mjs')]
    : ['--import', 'tsx', join(o.emulatorDir, 'src/main.ts')];
  const args = [
    ...(o.executable ? [] : [...(o.nodeArgs ?? []), ...prof, ...entry]),
    'start',
    '--port',
    '0',
    '--router-port',
    '0',
    '--ssh-port',
    '0',
    ...store,
    '--log-level',
    'silent',
  ];
  return start(
    'emulator',
    args,
    o.emulatorDir,
    cleanEnv({ ...command.env, ...o.env }),
    (out) => {
      const api = API_LINE.exec(out)?.[1];
      const token = TOKEN_LINE.exec(out)?.[1];
      return api && token ? { api, token } : null;
    },
    o.executable,
  );
}

export function spawnHello(
  repoDir: string,
  opts: { jsonFile?: string; env?: Record<string, string> } = {},
): Promise<Child> {
  const args = [
    '--import',
    'tsx',
    join(repoDir, 'bench/lib/hello-server.ts'),
    ...(opts.jsonFile ? ['--json-file', opts.jsonFile] : []),
  ];
  return start('hello', args, repoDir, cleanEnv(opts.env), (out) => {
    const api = HELLO_LINE.exec(out)?.[1];
    return api ? { api, token: null } : null;
  });
}

/**
 * A baseline server in a child process, with plain `node` (a .mjs bundled by bench/lib/bundle.ts, or a
 * plain JavaScript file) or through tsx like the sources; its banner says `listening <url>`.
 */
export function spawnScript(kind: 'hello' | 'node', file: string, opts: { tsx: boolean; cwd: string }): Promise<Child> {
  const args = opts.tsx ? ['--import', 'tsx', file] : [file];
  return start(kind, args, opts.cwd, cleanEnv(), (out) => {
    const api = HELLO_LINE.exec(out)?.[1];
    return api ? { api, token: null } : null;
  });
}

function start(
  kind: Child['kind'],
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  parse: (stdout: string) => { api: string; token: string | null } | null,
  program = process.execPath,
): Promise<Child> {
  const spawnedAt = performance.now();
  const proc = spawn(program, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  let out = '';
  let err = '';
  return new Promise<Child>((ok, fail) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      fail(new Error(`${kind} did not start within 30 s\nstdout: ${out}\nstderr: ${err}`));
    }, 30_000);
    let done = false;
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (done) return;
      const found = parse(out);
      if (!found) return;
      done = true;
      clearTimeout(timer);
      ok({
        kind,
        ...found,
        readyMs: performance.now() - spawnedAt,
        spawnedAt,
        proc,
        output: () => out,
        errors: () => err,
        stop: () => stopChild(proc),
      });
    });
    proc.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    proc.once('exit', (code, signal) => {
      if (done) return;
      clearTimeout(timer);
      fail(new Error(`${kind} exited (${code ?? signal}) before it was ready\nstdout: ${out}\nstderr: ${err}`));
    });
  });
}

/** SIGTERM (the emulator closes and, with --cpu-prof, writes its profile), SIGKILL after 10 s. */
function stopChild(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise<void>((ok) => {
    const kill = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    proc.once('exit', () => {
      clearTimeout(kill);
      ok();
    });
    proc.kill('SIGTERM');
  });
}
