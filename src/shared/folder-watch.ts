// A folder watched for changes (chokidar), by the system's file events while it has them and by polling
// once it has run out: on Linux an inotify instance or watch over the user's limit
// (fs.inotify.max_user_instances, max_user_watches: an engine running hundreds of containers holds many)
// fails with EMFILE or ENOSPC, and the native watcher would then see nothing and say nothing. Changes are
// still seen, within POLL_MS, and the user is told once why. Other errors are told once each.

import { type ChokidarOptions, type FSWatcher } from 'chokidar';

/** How often a polling watcher looks at the files. */
export const POLL_MS = 1_000;
/** The system's watch limits: what polling works around. */
const LIMIT_CODES = new Set(['EMFILE', 'ENOSPC']);
const MAX_WARNINGS = 10;

export interface FolderWatch {
  close(): Promise<void>;
}

export interface FolderWatchHandlers {
  /** chokidar's events (add, change, unlink, addDir, unlinkDir) with the path. */
  onEvent: (event: string, path: string) => void;
  /** One line for the user: the switch to polling, or an error the watcher met. */
  warn: (line: string) => void;
  /** The watcher's maker: chokidar's `watch` (tests give one that fails as the system would). */
  create?: (dir: string, options: ChokidarOptions) => FSWatcher;
}

/** Resolves once the folder is watched (its first scan done), by events or, past the system's limits, by polling. */
export async function watchFolderTree(
  dir: string,
  options: ChokidarOptions,
  h: FolderWatchHandlers,
): Promise<FolderWatch> {
  const create = h.create ?? (await import('chokidar')).watch;
  const warned = new Set<string>();
  let polling = false;
  let switching: Promise<void> | undefined;
  let current: FSWatcher | undefined;

  const start = async (poll: boolean) => {
    const w = create(
      dir,
      poll ? { ...options, usePolling: true, interval: POLL_MS, binaryInterval: POLL_MS } : options,
    );
    w.on('all', (event, path) => h.onEvent(event, path));
    w.on('error', (err) => onError(err));
    current = w;
    await new Promise<void>((ok) => w.once('ready', () => ok()));
  };

  const onError = (err: unknown) => {
    const e = err as NodeJS.ErrnoException;
    if (!polling && e?.code && LIMIT_CODES.has(e.code)) {
      polling = true;
      h.warn(
        `${dir}: the system's file-watch limit is reached ` +
          `(${e.code}: fs.inotify.max_user_instances / max_user_watches on Linux); ` +
          `watching by polling every ${POLL_MS / 1000} s`,
      );
      const native = current;
      switching = start(true).then(() => native?.close());
      return;
    }
    const line = `${dir}: watching: ${e?.message ?? String(err)}`;
    if (warned.has(line) || warned.size >= MAX_WARNINGS) return;
    warned.add(line);
    h.warn(line);
  };

  await start(false);
  // A limit met during the first scan: the poller's own scan is what "watched" waits for.
  await switching;
  return {
    async close() {
      await switching?.catch(() => undefined);
      await current?.close();
    },
  };
}
