// Output of one container as lines (ContainerRuntime.logs), from the engine's multiplexed or TTY stream.

import { type IncomingMessage } from 'node:http';
import { type Socket } from 'node:net';
import { type Readable } from 'node:stream';
import type Docker from 'dockerode';
import { AsyncQueue } from './async-queue.ts';
import { demuxBuffer, frameDemuxer, lineSplitter, parseTimestampedLine } from './engine-parse.ts';
import { type ContainerRuntime, type LogLine } from './runtime.ts';

const FOLLOW_QUEUE_LINES = 1_000;

/**
 * After a read of a followed stream, its socket is left unread this long. The engine writes a frame a line; a reader
 * that keeps up gets one line a read and pays Node's HTTP parser and stream machinery (socketOnData, the chunked body,
 * a `data` event) for each, a large share of the emulator's CPU a line in a burst (issue 40). With the gap, what the
 * engine writes meanwhile waits in the socket's buffer and comes in one read (about a hundred lines in a burst).
 * A line after a pause is read at once (the gap follows a read); a line during a gap waits for it, within the pipeline's
 * own 5 ms batch window (logs.pipeline.ts). Real time: an I/O pacing, not platform time.
 */
const READ_GAP_MS = 2;

/**
 * Pauses the response's socket for READ_GAP_MS after each read. The socket's `_paused` flag (Node's http: readStart()
 * leaves a socket with it paused) keeps the response's own read-ahead from resuming the socket during the gap; were
 * the flag ever ignored, the socket would just be read sooner, as before. At the gap's end the socket is resumed even
 * when the line queue is full: the response then buffers up to its high-water mark and pauses the socket itself.
 */
function readGaps(res: Readable): { afterRead(): void; stop(): void } {
  const socket = (res as IncomingMessage).socket as (Socket & { _paused?: boolean }) | null;
  let timer: NodeJS.Timeout | null = null;
  return {
    afterRead() {
      if (!socket || timer || socket.destroyed) return;
      socket._paused = true;
      socket.pause();
      timer = setTimeout(() => {
        timer = null;
        socket._paused = false;
        if (!socket.destroyed) socket.resume();
      }, READ_GAP_MS);
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
      if (socket) socket._paused = false;
    },
  };
}

type LogsOptions = Parameters<ContainerRuntime['logs']>[1];

/** `health.suspect()` is told when a followed stream is cut or fails (the engine may be gone). */
export async function containerLogs(container: Docker.Container, o: LogsOptions, health: { suspect(): void }) {
  const info = await container.inspect();
  const tty = info.Config.Tty;
  const since = o.sinceMs !== undefined ? o.sinceMs / 1000 : undefined;
  const base = { stdout: true, stderr: true, timestamps: true, since, tail: o.tail } as const;
  let pressured = false;
  let readOn = () => {};
  // Lines parsed but not yet taken by the collector, per followed container. The pipeline's own queue
  // (logs.queueMaxLines) bounds what waits to be stored; this bounds what waits in front of it: with 20
  // containers in a burst, 20 × 1,000 lines (~6 MB: 289 bytes of heap a ~90-byte line) rather than 20 × 5,000
  // (~29 MB) while a burst comes in (issue 25: peak RSS during a 1,000,000-line ingest).
  const queue = new AsyncQueue<LogLine>({
    highWater: FOLLOW_QUEUE_LINES,
    onPressure: (p) => {
      pressured = p;
      if (!p) readOn();
    },
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
  const source = (await container.logs({ ...base, follow: true })) as unknown as Readable;
  const write = tty
    ? (c: Buffer) => out.write(c)
    : frameDemuxer((stream, bytes, start, end) => (stream === 'stderr' ? err : out).write(bytes, start, end)).write;
  const gaps = readGaps(source);
  // Paused mode: read() hands everything the response holds as one buffer, so the HTTP chunks of one socket read (a
  // line each) are one parse, not a `data` event each. A full line queue stops the reading (the response then pauses
  // the socket once its own buffer is full); the queue's drain starts it again.
  readOn = () => {
    let read = false;
    for (let c: Buffer | null; !pressured && (c = source.read() as Buffer | null) !== null; read = true) write(c);
    if (read) gaps.afterRead();
  };
  source.on('readable', () => readOn());
  source.on('close', () => gaps.stop());
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
  return Object.assign(queue, {
    close: () => {
      source.destroy();
      queue.end();
    },
  });
}
