// Starts test/reliability/support/child-emulator.ts as a separate Node process and watches it: a
// crash (an unhandled 'error', an exception) is seen as the process exiting, with its output.
// Unlike ../emulator-process.ts (src/main.ts as a user starts it), the child takes options the CLI
// has no flags for: the in-memory runtime and a router upstream of the test's own.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../../..');

export interface EmulatorProcess {
  api: string;
  router: string;
  routerPort: number;
  instanceId: string;
  child: ChildProcess;
  /** Exit code/signal once exited, null while it runs. */
  exited(): { code: number | null; signal: string | null } | null;
  output(): string;
  /** Resident memory of the process, in bytes (Linux /proc). */
  rss(): number;
  stop(): Promise<void>;
}

export async function startEmulatorProcess(env: Record<string, string> = {}): Promise<EmulatorProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/reliability/support/child-emulator.ts')], {
    cwd: ROOT,
    env: { ...process.env, EMULATOR_CONFIG: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let exit: { code: number | null; signal: string | null } | null = null;
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const gone = new Promise<void>((ok) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      ok();
    }),
  );
  const info = await new Promise<{ api: string; router: string; routerPort: number; instanceId: string }>(
    (ok, fail) => {
      const t = setInterval(() => {
        const line = out.split('\n').find((l) => l.startsWith('{"ready":true'));
        if (line) {
          clearInterval(t);
          ok(JSON.parse(line));
        }
      }, 50);
      void gone.then(() => {
        clearInterval(t);
        fail(new Error(`the emulator process exited before it was ready: ${out}`));
      });
    },
  );
  return {
    ...info,
    child,
    exited: () => exit,
    output: () => out,
    rss: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024,
    async stop() {
      if (exit) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await gone;
      clearTimeout(t);
    },
  };
}
