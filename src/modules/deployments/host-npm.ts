import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';

// The host's own npm, run as a child process: it reaches the npm registry through the user's npm
// configuration (a registry mirror, its credentials, a proxy), which the build containers, offline,
// never see. Everything the builds fetch from the registry goes through here.

const NPM_TIMEOUT_MS = 10 * 60_000;
/** What a captured run keeps of its standard output (`npm view … --json` of a package with many versions). */
const MAX_CAPTURE = 8 * 1024 * 1024;

export interface NpmRun {
  /** npm's exit code; -1 when it could not start, timed out or printed more than the capture keeps. */
  code: number;
  /** Standard output when `capture` was asked, else ''. */
  stdout: string;
}

export interface NpmOptions {
  cwd: string;
  /** Each line npm prints (stderr, and stdout unless captured). */
  onLine?: (line: string) => void;
  capture?: boolean;
  timeoutMs?: number;
  /** Variables added to the host's environment (a package manager's settings). */
  env?: Record<string, string>;
  /** Ends the run (SIGTERM) when aborted: the emulator is stopping. */
  signal?: AbortSignal;
}

export function runNpm(args: string[], o: NpmOptions): Promise<NpmRun> {
  return runOnHost('npm', args, o);
}

/**
 * A package manager's JavaScript entry point (Yarn, pnpm) run by the emulator's own Node on the host,
 * with the host's environment (its npm configuration: registry, proxy), as the prefetch runs them.
 */
export function runNodeScript(script: string, args: string[], o: NpmOptions): Promise<NpmRun> {
  // The emulator's own NODE_OPTIONS (a loader under tests) are not the package manager's.
  return runOnHost(process.execPath, [script, ...args], { ...o, env: { NODE_OPTIONS: '', ...o.env } });
}

function runOnHost(command: string, args: string[], o: NpmOptions): Promise<NpmRun> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: o.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: o.signal,
      env: {
        ...process.env,
        npm_config_update_notifier: 'false',
        npm_config_fund: 'false',
        npm_config_audit: 'false',
        ...o.env,
      },
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), o.timeoutMs ?? NPM_TIMEOUT_MS);
    const chunks: Buffer[] = [];
    let captured = 0;
    let overflow = false;
    const lines = (c: Buffer) => {
      for (const l of c.toString('utf8').split('\n'))
        if (l.trim() && !/Unknown user config/.test(l)) o.onLine?.(l.trimEnd());
    };
    child.stdout.on('data', (c: Buffer) => {
      if (!o.capture) return lines(c);
      captured += c.length;
      if (captured > MAX_CAPTURE) {
        overflow = true;
        child.kill('SIGTERM');
      } else chunks.push(c);
    });
    child.stderr.on('data', lines);
    child.on('error', (err) => {
      clearTimeout(timer);
      o.onLine?.(err.message);
      resolve({ code: -1, stdout: '' });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: overflow ? -1 : (code ?? -1), stdout: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

let registry: Promise<string> | undefined;

/**
 * The registry the host's npm uses (`npm config get registry`: a mirror the user configured, or
 * npm's default), with a trailing slash. Asked once per process.
 */
export function hostRegistry(): Promise<string> {
  registry ??= runNpm(['config', 'get', 'registry'], { cwd: tmpdir(), capture: true }).then((run) => {
    const url = run.stdout.trim();
    if (run.code !== 0 || !/^https?:\/\/\S+$/.test(url)) {
      registry = undefined;
      return 'https://registry.npmjs.org/';
    }
    return url.endsWith('/') ? url : `${url}/`;
  });
  return registry;
}
