// Stopping the process that runs an emulator `up` started (the background one, or a foreground `up`):
// SIGTERM, which stops it cleanly (its containers and addon servers with it), then, past a minute,
// SIGKILL. Only a process that holds the data dir is signalled, so a pid reused by another program
// since is never touched.
import { dataDirHolder } from '../../db/data-dir-lock.ts';

const STOP_WAIT_MS = 60_000;

export async function stopEmulatorProcess(pid: number, dataDir: string): Promise<'stopped' | 'killed' | 'gone'> {
  if (dataDirHolder(dataDir)?.pid !== pid) return 'gone';
  signal(pid, 'SIGTERM');
  if (await exited(pid, STOP_WAIT_MS)) return 'stopped';
  signal(pid, 'SIGKILL');
  await exited(pid, 10_000);
  return 'killed';
}

async function exited(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return true;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
