import { type Logger, pino } from 'pino';

export type { Logger };

/** `fd` 2 sends the lines to stderr (`exec`: stdout belongs to the command it runs). */
export function createLogger(level: string, fd: 1 | 2 = 1): Logger {
  const options = { level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime };
  return fd === 1 ? pino(options) : pino(options, pino.destination({ fd: 2, sync: true }));
}
