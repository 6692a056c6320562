// Lines as foreman and `heroku local` print them: `web-1      | text`, one colour per process
// (by the order names appear), plain when the output is not a terminal (or NO_COLOR is set).
import { type Writable } from 'node:stream';

// foreman's palette: cyan, yellow, green, magenta, red, blue, then the bright ones.
const PALETTE = [36, 33, 32, 35, 31, 34, 96, 93, 92, 95, 91, 94];
const PAD = 12;

export interface LogPrinter {
  /** One line of a process (`web-1`, `postdeploy`, `build`…). */
  line(name: string, text: string): void;
  /** A line of `up` itself. */
  info(text: string): void;
}

export function createLogPrinter(out: Writable, color: boolean): LogPrinter {
  const colours = new Map<string, number>();
  const colourOf = (name: string) => {
    const kind = name.replace(/-\d+$/, '');
    let c = colours.get(kind);
    if (c === undefined) colours.set(kind, (c = PALETTE[colours.size % PALETTE.length]));
    return c;
  };
  const write = (s: string) => void out.write(s);
  return {
    line(name, text) {
      const label = `${name.padEnd(PAD)} |`;
      // Control characters of the app's output other than tab and colour codes are not passed on to the terminal.
      const clean = text.replace(/[\u0000-\u0008\u000b-\u001a\u001c-\u001f\u007f]/g, '');
      write(color ? `\u001b[${colourOf(name)}m${label}\u001b[0m ${clean}\n` : `${label} ${clean}\n`);
    },
    info(text) {
      write(color ? `\u001b[1m${text}\u001b[0m\n` : `${text}\n`);
    },
  };
}

/** `2026-01-02 15:04:05.123 +0000 UTC [web-1] text` (the platform's log line) → its container and text. */
export function splitLogLine(line: string): { container: string; text: string } | null {
  // Tokens 0–3 are the date, token 4 the container (as the official CLI reads them).
  let at = 0;
  for (let i = 0; i < 4; i++) {
    at = line.indexOf(' ', at) + 1;
    if (at === 0) return null;
  }
  if (line[at] !== '[') return null;
  const close = line.indexOf('] ', at);
  const end = close < 0 ? (line.endsWith(']') ? line.length - 1 : -1) : close;
  if (end < 0) return null;
  return { container: line.slice(at + 1, end), text: close < 0 ? '' : line.slice(close + 2) };
}
