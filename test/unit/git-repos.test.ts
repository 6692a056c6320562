import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRepos } from '../../src/modules/git/repos.ts';

// An app's repository goes with the app; deleting apps nobody pushed to looks at the disk once, not per app.
describe('git repositories: removal with the app', () => {
  const base = mkdtempSync(join(tmpdir(), 'repos-test-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('removing before any repository exists does nothing; one made afterwards is removed with its app', async () => {
    const root = join(base, 'git');
    const repos = createRepos({ root, maxPushBytes: 1024 * 1024 });
    await repos.remove('app-never-pushed'); // the root does not exist: nothing to stat or remove
    expect(existsSync(root)).toBe(false);
    const dir = await repos.ensure('app-pushed');
    expect(existsSync(join(dir, 'HEAD'))).toBe(true);
    await repos.remove('app-other');
    expect(existsSync(dir)).toBe(true);
    await repos.remove('app-pushed');
    expect(existsSync(dir)).toBe(false);
  });

  it('a root left by an earlier run is looked at: its repositories are removed with their apps', async () => {
    const root = join(base, 'earlier');
    const dir = await createRepos({ root, maxPushBytes: 1024 * 1024 }).ensure('app-earlier');
    const repos = createRepos({ root, maxPushBytes: 1024 * 1024 }); // a new start, same state directory
    await repos.remove('app-earlier');
    expect(existsSync(dir)).toBe(false);
  });
});
