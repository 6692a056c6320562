// A drain written to a file: non-syslog drain types, and every drain in `file` mode.
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { formattedLine } from '../../logs/log-line.ts';
import { QueuedTarget, type TargetOptions } from '../drain-targets.ts';
import { defineTransport, noOptions } from '../drain-transport.ts';

/** A file under the data dir, one line per log line (append mode: survives restarts). */
export class FileTarget extends QueuedTarget {
  private out: WriteStream | null = null;
  private blocked = false;

  constructor(
    readonly path: string,
    opts: TargetOptions,
  ) {
    super(opts);
  }

  protected kick(): void {
    if (this.closed || this.retryTimer || this.blocked) return;
    if (!this.out) {
      mkdirSync(dirname(this.path), { recursive: true });
      // A large buffer: under a flood several chunks go down in one writev instead of a wait for 'drain' each.
      const out = createWriteStream(this.path, { flags: 'a', highWaterMark: 1024 * 1024 });
      out.on('error', (err) => {
        this.out = null;
        this.blocked = false;
        this.failed(err);
      });
      this.out = out;
      this.succeeded();
    }
    while (this.queue.length && this.out) {
      if (!this.out.write(this.take((m) => `${m}\n`))) {
        this.blocked = true;
        this.out.once('drain', () => {
          this.blocked = false;
          this.kick();
        });
        return;
      }
    }
  }

  close(): void {
    super.close();
    this.out?.end();
    this.out = null;
  }
}

/**
 * Never chosen by a scheme: it stands in for drain types without a syslog endpoint and for every drain
 * in the `file` drains mode (LOCAL_TRANSPORT). Lines in the platform's text format.
 */
export const fileTransport = defineTransport({
  schemes: [],
  reach: 'local',
  url: { suffix: '', scheme: 'file' },
  options: noOptions,
  create: (target, queue) => new FileTarget(target.file, queue),
  format: (line) => formattedLine(line),
});
