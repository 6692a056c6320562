// An editor's save is one change (issue 35): the watcher of `up` sees a file saved the ways vim
// (its `4913` probe, a `.swp` swap file, the backup rename `file~`), an editor's atomic
// rename-on-save (a temporary file renamed over the file) and `sed -i` (a `sedXXXXXX` file renamed over
// it) do, and reports exactly one change naming only that file. "Exactly one" without waiting out a
// delay: after each save a marker file is written, and the next change must name only the marker (a
// late event of the save would come before it, in the same change or one of its own).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { watchFolder } from '../../src/cli/up/watch.ts';
import { eventually } from '../support/docker-cli.ts';

/**
 * The moment an editor (or a busy machine) takes between its steps: long enough for the watcher to see
 * the temporary file, shorter than the time a file must stay unchanged to count (src/cli/up/watch.ts).
 */
const editorPause = () => new Promise((ok) => setTimeout(ok, 40));

describe("up's watcher: one save, one change", () => {
  let dir: string;
  let changes: string[][];
  let watcher: { close(): Promise<void> };
  let marks = 0;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'up-saves-'));
    writeFileSync(join(dir, 'index.js'), 'console.log(1)\n');
    changes = [];
    // up's own debounce.
    watcher = await watchFolder(
      dir,
      300,
      (paths) => changes.push(paths),
      () => undefined,
    );
  });
  afterEach(async () => {
    await watcher.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The changes a save made: those reported before the marker's, which must stand alone. */
  async function changesOf(save: () => void | Promise<void>): Promise<string[][]> {
    const before = changes.length;
    await save();
    await eventually(() => changes.length > before, { timeoutMs: 10_000, what: 'the save reported' });
    const marker = `marker-${++marks}.txt`;
    writeFileSync(join(dir, marker), 'x');
    await eventually(() => changes.some((c) => c.includes(marker)), { timeoutMs: 10_000, what: 'the marker reported' });
    const all = changes.slice(before);
    expect(all.at(-1)).toEqual([marker]);
    return all.slice(0, -1);
  }

  it('vim (:w with its 4913 probe, swap file and backup rename)', async () => {
    const made = await changesOf(async () => {
      const file = join(dir, 'index.js');
      // vim checks it may create files in the folder, keeps a swap file, renames the file to its backup,
      // writes the new one, then removes the backup.
      writeFileSync(join(dir, '4913'), '');
      await editorPause();
      unlinkSync(join(dir, '4913'));
      writeFileSync(join(dir, '.index.js.swp'), 'swap');
      renameSync(file, `${file}~`);
      writeFileSync(file, 'console.log(2)\n');
      await editorPause();
      unlinkSync(`${file}~`);
      unlinkSync(join(dir, '.index.js.swp'));
    });
    expect(made).toEqual([['index.js']]);
  });

  it('an atomic rename-on-save (VS Code, JetBrains "safe write")', async () => {
    const made = await changesOf(async () => {
      const tmp = join(dir, '.index.js.tmp-1234');
      writeFileSync(tmp, 'console.log(3)\n');
      await editorPause();
      renameSync(tmp, join(dir, 'index.js'));
    });
    expect(made).toEqual([['index.js']]);
  });

  it('sed -i (a sedXXXXXX file renamed over the file)', async () => {
    const made = await changesOf(() => {
      execFileSync('sed', ['-i', 's/1/4/', join(dir, 'index.js')]);
    });
    expect(made).toEqual([['index.js']]);
  });

  it('several files saved at once are one change naming them all', async () => {
    const made = await changesOf(() => {
      writeFileSync(join(dir, 'a.js'), 'a');
      writeFileSync(join(dir, 'b.js'), 'b');
    });
    expect(made).toEqual([['a.js', 'b.js']]);
  });
});
