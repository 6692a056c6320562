// A full disk under the data directory: how a refused write is recognised, and how a write that must
// not be lost (the end of a deployment) waits for space to return.
import { type Logger } from './logger.ts';

/** A write refused because the disk is full: the file system's ENOSPC/EDQUOT, or SQLite's SQLITE_FULL. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL';
}

/** Runs a write again every second while the disk is full (10 min at most); any other error is thrown at once. */
export async function retryWhileDiskFull<T>(write: () => T, logger: Logger, what: string): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return write();
    } catch (err) {
      if (!isDiskFull(err) || attempt >= 600) throw err;
      if (attempt === 0) logger.warn({ err }, `disk full: ${what} is recorded once space returns`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
