import { readFileSync } from 'node:fs';
import { sleep } from './stats.ts';

/**
 * Resident memory of a process from /proc/<pid>/status (Linux): VmRSS now and VmHWM, the peak RSS
 * over its life. Read from outside the process, so nothing in the server is changed to measure it.
 */
export interface Memory {
  rssMiB: number;
  hwmMiB: number;
  /** RSS split: anonymous memory (JS heap, malloc) and file pages (code, mapped files). */
  anonMiB: number;
  fileMiB: number;
}

export function processMemory(pid: number | undefined): Memory {
  if (!pid) throw new Error('no process id to read the memory of');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kB = (field: string) => {
    const v = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1];
    if (v === undefined) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(v) / 1024;
  };
  return { rssMiB: kB('VmRSS'), hwmMiB: kB('VmHWM'), anonMiB: kB('RssAnon'), fileMiB: kB('RssFile') };
}

/**
 * Waits until RSS stops moving (two readings `everyMs` apart within `toleranceMiB`), at least `minMs`
 * and at most `maxMs`; returns the last reading and how long it took. Timers, GC and lazy module
 * loading after a start move RSS for a moment: a reading taken in the middle of that is noise.
 */
export async function settledMemory(
  pid: number | undefined,
  o: { minMs: number; maxMs: number; everyMs?: number; toleranceMiB?: number },
): Promise<Memory & { afterMs: number; stable: boolean }> {
  const every = o.everyMs ?? 500;
  const tolerance = o.toleranceMiB ?? 0.5;
  const t0 = performance.now();
  await sleep(o.minMs);
  let prev = processMemory(pid);
  for (;;) {
    await sleep(every);
    const cur = processMemory(pid);
    const elapsed = performance.now() - t0;
    if (Math.abs(cur.rssMiB - prev.rssMiB) <= tolerance) return { ...cur, afterMs: elapsed, stable: true };
    if (elapsed >= o.maxMs) return { ...cur, afterMs: elapsed, stable: false };
    prev = cur;
  }
}

export const mib = (n: number) => (Number.isFinite(n) ? `${n.toFixed(1)} MiB` : 'n/a');
