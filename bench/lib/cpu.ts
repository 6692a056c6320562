import { readFileSync } from 'node:fs';

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
export async function withCpu<T>(serverPid: number | undefined, fn: () => Promise<T>): Promise<{ value: T; serverCpuMs: number | null; clientCpuMs: number; wallMs: number }> {
  const s0 = processCpuMs(serverPid);
  const c0 = selfCpuMs();
  const t0 = performance.now();
  const value = await fn();
  const wallMs = performance.now() - t0;
  const s1 = processCpuMs(serverPid);
  return { value, serverCpuMs: s0 === null || s1 === null ? null : s1 - s0, clientCpuMs: selfCpuMs() - c0, wallMs };
}
