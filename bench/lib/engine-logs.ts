// A container's output followed straight from the engine (the request `docker logs -f --timestamps` makes), as
// lines: the raw baseline of a log path when many containers are followed at once by one client.

import { type Readable } from 'node:stream';
import Docker from 'dockerode';
import { frameDemuxer, lineSplitter } from '../../src/runtime/engine-parse.ts';

let engine: Docker | null = null;

/** Follows a non-TTY container's stdout and stderr; each line (`<RFC 3339 Nano> text`) with the time it arrived. */
export function followEngineLogs(id: string, onLine: (line: string, recvMs: number) => void): { close(): void } {
  engine ??= new Docker(); // DOCKER_HOST or the default socket, as the CLI
  let recv = 0;
  const split = lineSplitter((bytes, start, end) => onLine(bytes.toString('utf8', start, end), recv));
  const demux = frameDemuxer((_stream, bytes, start, end) => split.write(bytes, start, end));
  let source: Readable | null = null;
  let closed = false;
  void engine
    .getContainer(id)
    .logs({ follow: true, stdout: true, stderr: true, timestamps: true, tail: 0 })
    .then((s) => {
      source = s as unknown as Readable;
      if (closed) return source.destroy();
      source.on('data', (chunk: Buffer) => {
        recv = Date.now();
        demux.write(chunk);
      });
      source.on('error', () => undefined);
    });
  return {
    close() {
      closed = true;
      source?.destroy();
    },
  };
}
