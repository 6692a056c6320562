import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time actually spent by a process (all its threads), from /proc/<pid>/stat: unlike wall-clock
 * figures it is barely moved by other work on the machine, so it tells the cost of a request even
 * when other developers' test runs share the cores. Linux only; elsewhere null.
 */
const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux architecture Node supports

export function processCpuMs(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces), so counted from the closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** CPU time of this (the load generator's) process. */
export function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Measures the CPU a server and the client spent while fn ran. */
export async function withCpu<T>(
  serverPid: number | undefined,
  fn: () => Promise<T>,
): Promise<{ value: T; serverCpuMs: number | null; clientCpuMs: number; wallMs: number }> {
  const s0 = processCpuMs(serverPid);
  const c0 = selfCpuMs();
  const t0 = performance.now();
  const value = await fn();
  const wallMs = performance.now() - t0;
  const s1 = processCpuMs(serverPid);
  return { value, serverCpuMs: s0 === null || s1 === null ? null : s1 - s0, clientCpuMs: selfCpuMs() - c0, wallMs };
}

/**
 * A process read often and cheaply (every few ms): CPU in ns summed over its threads' schedstat — exact, where
 * /proc/<pid>/stat counts 10 ms ticks, so a few milliseconds of work show — and its open descriptors. The
 * time of a thread that exits goes with it: right for a long-lived server, not for totals of short-lived ones.
 */
export function processProbe(pid: number) {
  let tids: string[] = [];
  let reads = 0;
  return {
    cpuNs(): number {
      if (reads++ % 100 === 0) tids = readdirSync(`/proc/${pid}/task`);
      let total = 0;
      for (const tid of tids) {
        try {
          total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
        } catch {
          // thread gone; the list is read again shortly
        }
      }
      return total;
    },
    fds: () => readdirSync(`/proc/${pid}/fd`).length,
  };
}
