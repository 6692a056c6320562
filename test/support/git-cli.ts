import { type ChildProcess, spawn } from 'node:child_process';

// The real git and ssh clients, driven asynchronously: the emulator under test runs in this same
// process, so a synchronous child (execFileSync) would block the server it talks to.

const AUTHOR = {
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.test',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.test',
};

/** ssh options of a throw-away key against a throw-away host: no known_hosts, no agent, no prompt. */
export function sshOptions(privateKey: string): string[] {
  return [
    '-i',
    privateKey,
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'BatchMode=yes',
    '-o',
    'LogLevel=ERROR',
  ];
}

export interface Run {
  code: number;
  /** stdout and stderr, interleaved as they came. */
  out: string;
}

export interface Running {
  proc: ChildProcess;
  /** Everything printed so far. */
  output(): string;
  done: Promise<Run>;
}

export function start(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Running {
  const proc = spawn(cmd, args, {
    cwd: opts.cwd,
    env: { ...process.env, ...AUTHOR, LANG: 'C', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  const done = new Promise<Run>((ok) => {
    proc.once('error', (err) => ok({ code: -1, out: `${out}${err.message}` }));
    proc.once('close', (code) => {
      clearTimeout(timer);
      ok({ code: code ?? -1, out });
    });
  });
  return { proc, output: () => out, done };
}

/** `git <args>` in a work tree, pushing and fetching over SSH with this key. */
export function git(cwd: string, key: string, ...args: string[]): Promise<Run> {
  return gitStart(cwd, key, ...args).done;
}

export function gitStart(cwd: string, key: string, ...args: string[]): Running {
  return start('git', args, { cwd, env: { GIT_SSH_COMMAND: ['ssh', ...sshOptions(key)].join(' ') } });
}

/** `ssh -p <port> git@127.0.0.1 <command>` with this key. */
export function ssh(port: number, key: string, args: string[], user = 'git'): Promise<Run> {
  return start('ssh', [...sshOptions(key), '-p', String(port), `${user}@127.0.0.1`, ...args], { timeoutMs: 30_000 })
    .done;
}

/** A fresh work tree on branch main with the files of `dir`, committed. */
export async function initRepo(dir: string, key: string): Promise<string> {
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-qm', 'first'],
  ]) {
    const r = await git(dir, key, ...args);
    if (r.code !== 0) throw new Error(`git ${args.join(' ')}: ${r.out}`);
  }
  return head(dir, key);
}

export async function commitAll(dir: string, key: string, message: string, ...extra: string[]): Promise<string> {
  for (const args of [
    ['add', '-A'],
    ['commit', '-qm', message, ...extra],
  ]) {
    const r = await git(dir, key, ...args);
    if (r.code !== 0) throw new Error(`git ${args.join(' ')}: ${r.out}`);
  }
  return head(dir, key);
}

export async function head(dir: string, key: string): Promise<string> {
  return (await git(dir, key, 'rev-parse', 'HEAD')).out.trim();
}
