import { type SpawnOptions, spawn } from 'node:child_process';

/** A command run with its output kept: what it printed so far, and its exit (code, or null when killed by a signal). */
export function spawnCaptured(command: string, args: string[], options: Omit<SpawnOptions, 'stdio'>) {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}
