import { spawn } from 'node:child_process';
import { type ServerChannel } from 'ssh2';
import { gitEnv } from './repos.ts';

export type GitService = 'git-receive-pack' | 'git-upload-pack';

const MAX_COMMAND_LENGTH = 1024;
// App names: lower case letters, digits and hyphens (src/modules/apps/apps.schemas.ts).
const APP_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * Reads what git asks the SSH server to run: `git-receive-pack '<app>.git'` (push) or
 * `git-upload-pack '<app>.git'` (fetch, clone), the path with or without a leading slash
 * (`ssh://…/app.git` sends one, `git@host:app.git` does not), quoted or not. Nothing else runs.
 */
export function parseGitCommand(command: string): { service: GitService; appName: string } | { error: string } {
  const refused = {
    error:
      `only git push and git fetch are served here ("git-receive-pack '<app>.git'" or "git-upload-pack ` +
      `'<app>.git'"); refused: ${JSON.stringify(command.slice(0, 100))}`,
  };
  if (command.length > MAX_COMMAND_LENGTH) return refused;
  const m = /^(git-receive-pack|git-upload-pack|git receive-pack|git upload-pack) +(.+)$/.exec(command.trim());
  if (!m) return refused;
  let path = m[2];
  const quote = path[0];
  if (quote === "'" || quote === '"') {
    if (path.length < 2 || path[path.length - 1] !== quote) return refused;
    path = path.slice(1, -1);
  }
  const name = path
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  if (!APP_NAME.test(name))
    return {
      error: `"${path.slice(0, 100)}" is not an app's repository: use ssh://git@<host>:<port>/<app>.git (the app's git_url)`,
    };
  return { service: m[1].replace(' ', '-') as GitService, appName: name };
}

/**
 * Runs the real `git receive-pack` / `git upload-pack` on the app's bare repository with the SSH
 * channel as its stdin, stdout and stderr (an argv array, never a shell), and ends the channel
 * with its exit status. Returns a function that stops it (session time limit, emulator stop).
 */
export function runGitService(o: {
  service: GitService;
  repoDir: string;
  channel: ServerChannel;
  env: Record<string, string>;
  onEnd(status: number): void;
}): () => void {
  const { channel } = o;
  const child = spawn('git', [o.service === 'git-receive-pack' ? 'receive-pack' : 'upload-pack', '--', o.repoDir], {
    env: gitEnv(o.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let ended = false;
  const end = (status: number) => {
    if (ended) return;
    ended = true;
    if (channel.writable) {
      channel.exit(status);
      channel.end();
    }
    o.onEnd(status);
  };
  child.once('error', (err) => {
    channel.stderr.write(` !     cannot run git: ${err.message}\n`);
    end(1);
  });
  child.stdin.on('error', () => undefined);
  child.stdout.on('error', () => undefined);
  child.stderr.on('error', () => undefined);
  channel.pipe(child.stdin);
  child.stdout.pipe(channel, { end: false });
  child.stderr.pipe(channel.stderr, { end: false });
  // 'close': every output of git has been read (and passed on) — then the status, then the end.
  child.once('close', (code) => end(code ?? 1));
  channel.once('close', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  });
  return () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  };
}
