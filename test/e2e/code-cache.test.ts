import { chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureEmulatorBundle } from '../../bench/lib/bundle.ts';
import { spawnEmulator } from '../../bench/lib/processes.ts';

// The command as `npm start` runs it (dist/main.mjs, the bundle's CommonJS chunks through V8's code cache,
// src/boot/): a cache written by one start is used by the next, and a damaged or foreign one never stops a start.
const ROOT = join(import.meta.dirname, '../..');

let tmp: string;
beforeAll(() => {
  ensureEmulatorBundle(ROOT);
  tmp = mkdtempSync(join(tmpdir(), 'code-cache-e2e-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Starts the bundle with this cache directory, checks it answers healthy, stops it (SIGTERM: the cache is written at exit). */
async function startAndStop(cacheDir: string): Promise<string> {
  const child = await spawnEmulator({
    emulatorDir: ROOT,
    dataDir: null,
    bundled: true,
    env: { EMULATOR_CODE_CACHE_DIR: cacheDir },
  });
  try {
    const health = await fetch(`${child.api}/_emulator/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { status: string }).status).toBe('ok');
    // Chunks loaded after start (the token exchange's jose, a lazy route group) load as well.
    const basic = { authorization: `Basic ${Buffer.from(`:${child.token}`).toString('base64')}` };
    const exchanged = await fetch(`${child.api}/v1/tokens/exchange`, { method: 'POST', headers: basic });
    expect(exchanged.status).toBe(200);
    const bearer = ((await exchanged.json()) as { token: string }).token;
    const self = await fetch(`${child.api}/v1/users/self`, { headers: { authorization: `Bearer ${bearer}` } });
    expect(self.status).toBe(200);
  } finally {
    await child.stop();
  }
  return child.errors();
}

/** Each cache file's inode and modification time: a file rewritten (renamed over) gets a new inode. */
function files(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir).map((n) => [n, `${statSync(join(dir, n)).ino}:${statSync(join(dir, n)).mtimeMs}`]),
  );
}

describe('the command with its code cache', () => {
  it('writes the cache of the chunks a start loads, and the next start uses it without rewriting it', async () => {
    const cache = join(tmp, 'cache');
    mkdirSync(cache, { mode: 0o700 });
    expect(await startAndStop(cache)).toBe('');
    const written = files(cache);
    const names = Object.keys(written);
    expect(names.some((n) => /^main\.cjs\.[0-9a-f]{8}\.v8cache$/.test(n))).toBe(true);
    expect(names.length).toBeGreaterThan(10);
    for (const n of names) expect(statSync(join(cache, n)).mode & 0o777).toBe(0o600);
    await startAndStop(cache);
    // V8 accepted every file: a rejected or unusable one would have been written again.
    expect(files(cache)).toEqual(written);
  });

  it('starts from a damaged cache and writes it again', async () => {
    const cache = join(tmp, 'cache');
    const before = files(cache);
    for (const n of Object.keys(before)) {
      const bytes = readFileSync(join(cache, n));
      bytes[bytes.length >> 1] ^= 0xff;
      writeFileSync(join(cache, n), bytes);
    }
    const damaged = files(cache);
    await startAndStop(cache);
    const after = files(cache);
    expect(Object.keys(after).sort()).toEqual(Object.keys(damaged).sort());
    for (const n of Object.keys(after)) expect(after[n], n).not.toBe(damaged[n]);
  });

  it('starts without a cache, with a warning, when another user owns its directory', async (ctx) => {
    if (process.getuid?.() !== 0) ctx.skip(); // only root can give a directory away
    const foreign = join(tmp, 'foreign');
    mkdirSync(foreign, { mode: 0o700 });
    chownSync(foreign, 65534, 65534);
    const stderr = await startAndStop(foreign);
    expect(stderr).toMatch(/V8 code cache not used: .*foreign belongs to uid 65534/);
    expect(readdirSync(foreign)).toEqual([]);
  });
});
