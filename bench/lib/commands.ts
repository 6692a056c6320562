import { spawn } from 'node:child_process';

// What the build benchmarks (builds.ts, node-runtime.ts) share: a command run to its end, a timing, a figure.

/** Runs a command to its end; rejects with the end of its stderr when it exits non-zero. */
export function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  return new Promise((ok, fail) => {
    const p = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('error', fail);
    p.on('close', (code) =>
      code === 0 ? ok() : fail(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(-2000)}`)),
    );
    p.stdin.end(opts.input ?? '');
  });
}

/** Seconds `fn` took. */
export const timed = async (fn: () => Promise<unknown>): Promise<number> => {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
};

/** Seconds as a table shows them. */
export const s = (n: number): string => `${n.toFixed(1)} s`;
