// Progress of long work (first base-image build, deployments, `exec`'s start and stop) for the
// commands. On a terminal: one line per task, redrawn in place with a spinner and the elapsed time,
// then a ✔/✖ line. Anywhere else (CI logs, pipes): no animation, structured pino lines instead.
import { type Writable } from 'node:stream';
import { type Logger } from '../shared/logger.ts';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface Task {
  /** A new detail (the current step, a build line). */
  update(detail: string): void;
  done(detail?: string): void;
  fail(detail?: string): void;
}

export interface Progress {
  readonly tty: boolean;
  start(label: string, fields?: Record<string, unknown>): Task;
  /** A plain line (only on a terminal; the structured logs carry the same facts elsewhere). */
  note(line: string): void;
}

export function createProgress(opts: {
  stream: Writable & { isTTY?: boolean; columns?: number };
  logger: Logger;
  tty?: boolean;
}): Progress {
  const { stream, logger } = opts;
  const tty = opts.tty ?? !!stream.isTTY;
  const active = new Map<number, { label: string; detail: string; t0: number }>();
  let seq = 0;
  let frame = 0;
  let drawn = 0; // lines of the live area currently on screen
  let timer: NodeJS.Timeout | undefined;

  const width = () => Math.max(20, (stream.columns || 100) - 1);
  const clip = (s: string) => (s.length > width() ? `${s.slice(0, width() - 1)}…` : s);
  const secs = (t0: number) => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
  // The live area: one line per task under way, rewritten from its first line.
  function redraw(above = '') {
    let out = drawn ? `\x1b[${drawn}F\x1b[J` : '';
    out += above;
    const lines = [...active.values()].map((t) =>
      clip(`${FRAMES[frame % FRAMES.length]} ${t.label}${t.detail ? ` — ${t.detail}` : ''} (${secs(t.t0)})`),
    );
    out += lines.map((l) => `${l}\n`).join('');
    drawn = lines.length;
    stream.write(out);
  }
  function tick() {
    frame++;
    redraw();
  }

  return {
    tty,
    start(label, fields = {}) {
      const id = ++seq;
      const t0 = performance.now();
      if (!tty) {
        logger.info({ ...fields, task: label }, `${label}: started`);
        return {
          update: (detail) => logger.debug({ ...fields, task: label, detail }, `${label}: ${detail}`),
          done: (detail) =>
            logger.info({ ...fields, task: label, ms: Math.round(performance.now() - t0), detail }, `${label}: done`),
          fail: (detail) =>
            logger.warn({ ...fields, task: label, ms: Math.round(performance.now() - t0), detail }, `${label}: failed`),
        };
      }
      active.set(id, { label, detail: '', t0 });
      timer ??= setInterval(tick, 100);
      timer.unref();
      redraw();
      const end = (mark: string, detail?: string) => {
        if (!active.has(id)) return;
        active.delete(id);
        if (!active.size && timer) {
          clearInterval(timer);
          timer = undefined;
        }
        redraw(`${clip(`${mark} ${label}${detail ? ` — ${detail}` : ''} (${secs(t0)})`)}\n`);
      };
      return {
        update(detail) {
          const t = active.get(id);
          if (t) t.detail = detail.trim();
        },
        done: (detail) => end('✔', detail),
        fail: (detail) => end('✖', detail),
      };
    },
    note(line) {
      if (tty) redraw(`${line}\n`);
    },
  };
}
