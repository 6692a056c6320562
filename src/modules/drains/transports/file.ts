// A drain written to a file: non-syslog drain types, and every drain in `file` mode.
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { formattedLine } from '../../logs/log-line.ts';
import { QueuedTarget, type TargetOptions } from '../drain-targets.ts';
import type { DrainTransport } from '../drain-transport.ts';

/** A file under the data dir, one line per log line (append mode: survives restarts). */
class FileTarget extends QueuedTarget {
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

/** Never chosen by a scheme: the drain's type or the `file` mode picks it. Lines in the platform's text format. */
export const fileTransport: DrainTransport = {
  schemes: [],
  url: { suffix: '', scheme: 'file' },
  create: (_row, ctx) => new FileTarget(ctx.file, ctx.options),
  format: (line) => formattedLine(line),
};
