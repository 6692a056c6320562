// Pure translations of the engine's answers (no engine access here): log lines, stats, states.
import { type LogLine, type StatsSample } from './runtime.ts';

/** Longest line kept whole: a stream that writes more without a newline is handed in lines of this length. */
export const MAX_LINE_BYTES = 256 * 1024;

/**
 * Splits a byte stream into lines (a trailing \r dropped), keeping a partial last line for the next chunk.
 * Each line is handed as a range of bytes, so the caller decodes it once (no string a chunk, no split
 * array: the logs' hot path, issue 25); a character cut between two chunks is decoded whole. A partial line
 * that reaches `maxLineBytes` is handed as it is, so what waits for a newline stays bounded whatever the
 * stream writes.
 */
export function lineSplitter(
  onLine: (bytes: Buffer, start: number, end: number) => void,
  maxLineBytes = MAX_LINE_BYTES,
): {
  write(chunk: Buffer, start?: number, end?: number): void;
  flush(): void;
} {
  let rest: Buffer | null = null;
  const emit = (b: Buffer, start: number, end: number) =>
    onLine(b, start, end > start && b[end - 1] === CR ? end - 1 : end);
  return {
    write(chunk, start = 0, end = chunk.length) {
      let from = start;
      for (let i = start; i < end; i++) {
        if (chunk[i] !== LF) continue;
        if (rest) {
          const line: Buffer = Buffer.concat([rest, chunk.subarray(from, i)]);
          rest = null;
          emit(line, 0, line.length);
        } else emit(chunk, from, i);
        from = i + 1;
      }
      // A copy: the rest outlives this chunk, which may be a view of a larger buffer.
      if (from < end)
        rest = rest ? Buffer.concat([rest, chunk.subarray(from, end)]) : Buffer.from(chunk.subarray(from, end));
      while (rest && rest.length >= maxLineBytes) {
        emit(rest, 0, maxLineBytes);
        rest = rest.length > maxLineBytes ? rest.subarray(maxLineBytes) : null;
      }
    },
    flush() {
      if (rest?.length) emit(rest, 0, rest.length);
      rest = null;
    },
  };
}

const LF = 10;
const CR = 13;
const SPACE = 32;

/** `2026-11-22T03:21:48.123456789Z text` (docker logs --timestamps), the bytes start…end → LogLine. */
export function parseTimestampedLine(
  bytes: Buffer,
  start: number,
  end: number,
  stream: 'stdout' | 'stderr',
): LogLine | null {
  let sp = start;
  while (sp < end && bytes[sp] !== SPACE) sp++;
  // Docker's timestamp is ASCII: latin1 decodes it without UTF-8's checks.
  const timestamp = bytes.toString('latin1', start, sp);
  const time = Date.parse(timestamp);
  if (Number.isNaN(time)) return null;
  return { time, timestamp, stream, text: sp < end ? bytes.toString('utf8', sp + 1, end) : '' };
}

/**
 * Demultiplexes Docker's framed stdout/stderr stream (non-TTY containers: an 8-byte header — stream
 * type, then the payload length — before each payload), chunk by chunk. Frames are handed by offset
 * (no Buffer view a frame); only a frame cut between two chunks is copied (docker-modem's demuxStream copies the rest of the
 * buffer for every frame: quadratic on a large chunk).
 */
export function frameDemuxer(
  onFrame: (stream: 'stdout' | 'stderr', bytes: Buffer, start: number, end: number) => void,
): {
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
        onFrame(buf[i] === 2 ? 'stderr' : 'stdout', buf, i + 8, i + 8 + len);
        i += 8 + len;
      }
      if (i < buf.length) pending = buf.subarray(i);
    },
  };
}

/** The same, for a whole buffer at once (non-follow reads). */
export function demuxBuffer(buf: Buffer): { stream: 'stdout' | 'stderr'; data: Buffer }[] {
  const out: { stream: 'stdout' | 'stderr'; data: Buffer }[] = [];
  frameDemuxer((stream, b, start, end) => out.push({ stream, data: b.subarray(start, end) })).write(buf);
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
