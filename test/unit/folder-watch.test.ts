import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChokidarOptions, type FSWatcher, watch } from 'chokidar';
import { afterEach, describe, expect, it } from 'vitest';
import { watchFolderTree } from '../../src/shared/folder-watch.ts';
import { eventually } from '../support/docker-cli.ts';

// The system's file events run out (Linux: inotify instances or watches over the user's limit): the
// native watcher fails with EMFILE/ENOSPC and sees nothing. A stand-in for that watcher fails as the
// system makes chokidar fail; the polling one is chokidar's, on a real folder.
function failingNative(code: string): FSWatcher {
  const w = new EventEmitter();
  setImmediate(() => {
    w.emit('error', Object.assign(new Error(`${code}: too many open files, watch`), { code }));
    w.emit('ready');
  });
  return Object.assign(w, { close: async () => undefined }) as unknown as FSWatcher;
}

describe('watchFolderTree', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const code of ['EMFILE', 'ENOSPC']) {
    it(`past the system's limit (${code}) it watches by polling, says so once, and still sees a change`, async () => {
      dir = mkdtempSync(join(tmpdir(), 'folder-watch-'));
      const made: boolean[] = [];
      const warnings: string[] = [];
      const events: string[] = [];
      const w = await watchFolderTree(
        dir,
        { ignoreInitial: true },
        {
          onEvent: (event, path) => events.push(`${event} ${path}`),
          warn: (line) => warnings.push(line),
          create: (d: string, o: ChokidarOptions) => {
            made.push(o.usePolling === true);
            return o.usePolling ? watch(d, o) : failingNative(code);
          },
        },
      );
      try {
        expect(made).toEqual([false, true]);
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toContain(`${code}`);
        expect(warnings[0]).toContain('watching by polling every 1 s');
        // A new file each time until one is seen: a poller's first look at the folder (fs.watchFile's first stat)
        // may come after its ready, and what was written before that look is its baseline, not a change.
        let n = 0;
        await eventually(
          () => {
            writeFileSync(join(dir, `file-${n++}.js`), 'x');
            return events.some((e) => e.startsWith(`add ${join(dir, 'file-')}`));
          },
          { timeoutMs: 10_000, what: 'the polling watcher reporting a new file' },
        );
      } finally {
        await w.close();
      }
    });
  }

  it('another error is told once, and the native watcher is kept', async () => {
    dir = mkdtempSync(join(tmpdir(), 'folder-watch-'));
    const warnings: string[] = [];
    const made: boolean[] = [];
    // A native watcher that works (ready) and later meets an error that polling would not cure.
    const native = Object.assign(new EventEmitter(), { close: async () => undefined });
    const w = await watchFolderTree(
      dir,
      { ignoreInitial: true },
      {
        onEvent: () => undefined,
        warn: (line) => warnings.push(line),
        create: (_d: string, o: ChokidarOptions) => {
          made.push(o.usePolling === true);
          setImmediate(() => native.emit('ready'));
          return native as unknown as FSWatcher;
        },
      },
    );
    try {
      const err = Object.assign(new Error('EIO: i/o error, watch'), { code: 'EIO' });
      native.emit('error', err);
      native.emit('error', err);
      expect(warnings).toEqual([`${dir}: watching: EIO: i/o error, watch`]);
      expect(made).toEqual([false]);
    } finally {
      await w.close();
    }
  });
});
