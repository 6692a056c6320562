import { spawn } from 'node:child_process';

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
}

export function runNpm(args: string[], o: NpmOptions): Promise<NpmRun> {
  return new Promise((resolve) => {
    const child = spawn('npm', args, {
      cwd: o.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
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
