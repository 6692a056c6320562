// Output of one container as lines (ContainerRuntime.logs), from the engine's multiplexed or TTY stream.

import { type Readable } from 'node:stream';
import type Docker from 'dockerode';
import { AsyncQueue } from './async-queue.ts';
import { demuxBuffer, frameDemuxer, lineSplitter, parseTimestampedLine } from './engine-parse.ts';
import { type ContainerRuntime, type LogLine } from './runtime.ts';

const FOLLOW_QUEUE_LINES = 1_000;

type LogsOptions = Parameters<ContainerRuntime['logs']>[1];

/** `health.suspect()` is told when a followed stream is cut or fails (the engine may be gone). */
export async function containerLogs(container: Docker.Container, o: LogsOptions, health: { suspect(): void }) {
  const info = await container.inspect();
  const tty = info.Config.Tty;
  const since = o.sinceMs !== undefined ? o.sinceMs / 1000 : undefined;
  const base = { stdout: true, stderr: true, timestamps: true, since, tail: o.tail } as const;
  let source: Readable | null = null;
  // Lines parsed but not yet taken by the collector, per followed container. The pipeline's own queue
  // (logs.queueMaxLines) bounds what waits to be stored; this bounds what waits in front of it: with 20
  // containers in a burst, 20 × 1,000 lines (~6 MB: 289 bytes of heap a ~90-byte line) rather than 20 × 5,000
  // (~29 MB) while a burst comes in (issue 25: peak RSS during a 1,000,000-line ingest).
  const queue = new AsyncQueue<LogLine>({
    highWater: FOLLOW_QUEUE_LINES,
    onPressure: (p) => (p ? source?.pause() : source?.resume()),
  });
  const mkSplit = (stream: 'stdout' | 'stderr') =>
    lineSplitter((bytes, start, end) => {
      const l = parseTimestampedLine(bytes, start, end, stream);
      if (l && (o.sinceMs === undefined || l.time >= o.sinceMs)) queue.push(l);
    });
  const out = mkSplit('stdout');
  const err = mkSplit('stderr');
  if (!o.follow) {
    const buf = (await container.logs({ ...base, follow: false })) as unknown as Buffer;
    if (tty) out.write(buf);
    else for (const f of demuxBuffer(buf)) (f.stream === 'stderr' ? err : out).write(f.data);
    out.flush();
    err.flush();
    queue.end();
    return Object.assign(queue, { close: () => queue.end() });
  }
  source = (await container.logs({ ...base, follow: true })) as unknown as Readable;
  if (tty) source.on('data', (c: Buffer) => out.write(c));
  else {
    const demux = frameDemuxer((stream, bytes, start, end) =>
      (stream === 'stderr' ? err : out).write(bytes, start, end),
    );
    source.on('data', (c: Buffer) => demux.write(c));
  }
  source.on('end', () => {
    // A stream cut (engine gone) may end mid-line: that part is read again on resume, not kept.
    if ((source as { complete?: boolean }).complete !== false) {
      out.flush();
      err.flush();
    } else health.suspect();
    queue.end();
  });
  source.on('error', () => {
    health.suspect();
    queue.end();
  });
  const src = source;
  return Object.assign(queue, {
    close: () => {
      (src as Readable & { destroy(): void }).destroy();
      queue.end();
    },
  });
}
