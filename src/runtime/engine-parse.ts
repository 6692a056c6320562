// Pure translations of the engine's answers (no engine access here): log lines, stats, states.
import type { LogLine, StatsSample } from './runtime.ts';

/** Splits a chunk stream into lines, keeping a partial last line for the next chunk. */
export function lineSplitter(onLine: (line: string) => void): { write(chunk: Buffer | string): void; flush(): void } {
  let rest = '';
  return {
    write(chunk) {
      const text = rest + chunk.toString('utf8');
      const parts = text.split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) onLine(p.endsWith('\r') ? p.slice(0, -1) : p);
    },
    flush() {
      if (rest) onLine(rest);
      rest = '';
    },
  };
}

/** `2026-11-22T03:21:48.123456789Z text` (docker logs --timestamps) → LogLine. */
export function parseTimestampedLine(raw: string, stream: 'stdout' | 'stderr'): LogLine | null {
  const sp = raw.indexOf(' ');
  const timestamp = sp > 0 ? raw.slice(0, sp) : raw;
  const time = Date.parse(timestamp);
  if (Number.isNaN(time)) return null;
  return { time, timestamp, stream, text: sp > 0 ? raw.slice(sp + 1) : '' };
}

/**
 * Demultiplexes Docker's framed stdout/stderr stream (non-TTY containers: an 8-byte header — stream
 * type, then the payload length — before each payload), chunk by chunk. Frames are read by offset;
 * only a frame cut between two chunks is copied (docker-modem's demuxStream copies the rest of the
 * buffer for every frame: quadratic on a large chunk).
 */
export function frameDemuxer(onFrame: (stream: 'stdout' | 'stderr', data: Buffer) => void): {
  write(chunk: Buffer): void;
} {
  let pending: Buffer | null = null;
  return {
    write(chunk) {
      const buf = pending ? Buffer.concat([pending, chunk]) : chunk;
      pending = null;
      let i = 0;
      while (buf.length - i >= 8) {
        const len = buf.readUInt32BE(i + 4);
        if (buf.length - i - 8 < len) break;
        onFrame(buf[i] === 2 ? 'stderr' : 'stdout', buf.subarray(i + 8, i + 8 + len));
        i += 8 + len;
      }
      if (i < buf.length) pending = buf.subarray(i);
    },
  };
}

/** The same, for a whole buffer at once (non-follow reads). */
export function demuxBuffer(buf: Buffer): { stream: 'stdout' | 'stderr'; data: Buffer }[] {
  const out: { stream: 'stdout' | 'stderr'; data: Buffer }[] = [];
  frameDemuxer((stream, data) => out.push({ stream, data })).write(buf);
  return out;
}

interface DockerStats {
  read: string;
  cpu_stats?: {
    cpu_usage?: { total_usage?: number; percpu_usage?: number[] };
    system_cpu_usage?: number;
    online_cpus?: number;
  };
  precpu_stats?: { cpu_usage?: { total_usage?: number }; system_cpu_usage?: number };
  memory_stats?: { usage?: number; max_usage?: number; limit?: number; stats?: Record<string, number> };
}

/** Docker stats JSON → sample. cpu: fraction of one core, as `docker stats` computes it (delta / system delta × cpus). */
export function statsFromDocker(s: DockerStats, swapLimit: number): StatsSample {
  const cpuDelta = (s.cpu_stats?.cpu_usage?.total_usage ?? 0) - (s.precpu_stats?.cpu_usage?.total_usage ?? 0);
  const sysDelta = (s.cpu_stats?.system_cpu_usage ?? 0) - (s.precpu_stats?.system_cpu_usage ?? 0);
  const cpus = s.cpu_stats?.online_cpus ?? s.cpu_stats?.cpu_usage?.percpu_usage?.length ?? 1;
  const cpu = cpuDelta > 0 && sysDelta > 0 ? (cpuDelta / sysDelta) * cpus : 0;
  const m = s.memory_stats ?? {};
  const st = m.stats ?? {};
  // Page cache is not the app's memory: cgroup v1 reports it as total_inactive_file / cache, v2 as inactive_file.
  const cache = st.total_inactive_file ?? st.inactive_file ?? st.cache ?? 0;
  const usage = Math.max(0, (m.usage ?? 0) - cache);
  const swap = Math.max(0, st.total_swap ?? st.swap ?? 0);
  return {
    time: Date.parse(s.read) || Date.now(),
    cpu,
    memoryUsage: usage,
    memoryLimit: m.limit ?? 0,
    memoryMaxUsage: Math.max(usage, m.max_usage ?? 0),
    swapUsage: swap,
    swapLimit,
  };
}
