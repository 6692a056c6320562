import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChunkLoader } from '../../src/boot/chunk-loader.ts';
import { ancestorProblem, codeCacheDir, privateDirProblem } from '../../src/boot/code-cache-dir.ts';
import { CodeCacheStore } from '../../src/boot/code-cache-store.ts';

// The code cache of the `scalingo-emulator` command (src/boot/): where it may live, and that a missing, stale, damaged
// or rejected cache only costs a plain compile. The command itself with it: test/e2e/code-cache.test.ts.

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'code-cache-'));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

const uid = process.getuid?.() ?? -1;
const OTHER_UID = uid === 0 ? 65534 : -1;

describe('the code cache directory', () => {
  it('is beside the bundle when the user owns it, created 0700', () => {
    const choice = codeCacheDir(tmp, {});
    expect(choice).toEqual({ dir: join(tmp, '.v8-cache') });
    expect(statSync(join(tmp, '.v8-cache')).mode & 0o777).toBe(0o700);
  });

  it("is under the user's cache dir when the bundle's directory is someone else's", (ctx) => {
    if (OTHER_UID < 0) ctx.skip(); // only root can give a directory away
    const bundle = join(tmp, 'installed');
    mkdirSync(bundle);
    chownSync(bundle, OTHER_UID, OTHER_UID);
    const choice = codeCacheDir(bundle, { XDG_CACHE_HOME: join(tmp, 'home-cache') });
    expect(choice.dir).toMatch(new RegExp(`^${join(tmp, 'home-cache', 'scalingo-emulator', 'v8-cache')}/[0-9a-f]{8}$`));
    expect(statSync(choice.dir ?? '').mode & 0o777).toBe(0o700);
  });

  it('is refused when another user owns it (one who could plant code in it)', (ctx) => {
    if (OTHER_UID < 0) ctx.skip();
    const planted = join(tmp, 'planted');
    mkdirSync(planted, { mode: 0o700 });
    chownSync(planted, OTHER_UID, OTHER_UID);
    const choice = codeCacheDir(tmp, { EMULATOR_CODE_CACHE_DIR: planted });
    expect(choice.dir).toBeNull();
    expect(choice).toMatchObject({ reason: expect.stringContaining(`belongs to uid ${OTHER_UID}`) });
  });

  it('is refused when others may write it, or when it is a symbolic link', () => {
    const open = join(tmp, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(codeCacheDir(tmp, { EMULATOR_CODE_CACHE_DIR: open })).toMatchObject({
      dir: null,
      reason: expect.stringContaining('writable by others'),
    });
    chmodSync(open, 0o770);
    expect(privateDirProblem(open)).toMatch(/writable by others \(mode 770\)/);
    const link = join(tmp, 'link');
    mkdirSync(join(tmp, 'target'), { mode: 0o700 });
    symlinkSync(join(tmp, 'target'), link);
    expect(privateDirProblem(link)).toBe('is a symbolic link');
  });

  it('is refused inside a directory others may write without a sticky bit (they could swap it after the check)', () => {
    const shared = join(tmp, 'shared');
    mkdirSync(join(shared, 'v8'), { recursive: true, mode: 0o700 });
    chmodSync(shared, 0o777);
    expect(codeCacheDir(tmp, { EMULATOR_CODE_CACHE_DIR: join(shared, 'v8') })).toMatchObject({
      dir: null,
      reason: expect.stringContaining(`is inside ${shared}, which others may write (mode 777, no sticky bit)`),
    });
    chmodSync(shared, 0o1777); // as /tmp: others may not rename what is not theirs
    expect(ancestorProblem(join(shared, 'v8'))).toBeNull();
    expect(codeCacheDir(tmp, { EMULATOR_CODE_CACHE_DIR: join(shared, 'v8') })).toEqual({ dir: join(shared, 'v8') });
  });

  it('is none when EMULATOR_CODE_CACHE is off', () => {
    expect(codeCacheDir(tmp, { EMULATOR_CODE_CACHE: 'off' })).toEqual({
      dir: null,
      reason: 'EMULATOR_CODE_CACHE is off',
    });
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe('the code cache files', () => {
  const source = Buffer.from('function f() { return 42 }');

  it('give back the data written for the same source only, and nothing once damaged', () => {
    const store = new CodeCacheStore(tmp);
    const data = Buffer.from('some V8 cache data');
    expect(store.read('main.cjs', source)).toBeNull(); // missing
    store.write('main.cjs', source, data);
    const [file] = readdirSync(tmp);
    expect(statSync(join(tmp, file)).mode & 0o777).toBe(0o600);
    expect(store.read('main.cjs', source)).toEqual(data);
    expect(store.read('main.cjs', Buffer.from('function f() { return 43 }'))).toBeNull(); // same length, other source
    expect(store.read('main.cjs', Buffer.from('function g() { return 42; }'))).toBeNull();
    const bytes = readFileSync(join(tmp, file));
    bytes[bytes.length - 1] ^= 1;
    writeFileSync(join(tmp, file), bytes);
    expect(store.read('main.cjs', source)).toBeNull(); // damaged payload
    writeFileSync(join(tmp, file), bytes.subarray(0, 10));
    expect(store.read('main.cjs', source)).toBeNull(); // truncated
  });

  it('are not read when a file is a symbolic link or others may write it', () => {
    const store = new CodeCacheStore(tmp);
    const data = Buffer.from('some V8 cache data');
    store.write('main.cjs', source, data);
    const [file] = readdirSync(tmp);
    chmodSync(join(tmp, file), 0o666);
    expect(store.read('main.cjs', source)).toBeNull();
    chmodSync(join(tmp, file), 0o600);
    expect(store.read('main.cjs', source)).toEqual(data);
    const elsewhere = join(tmp, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    const other = new CodeCacheStore(elsewhere);
    symlinkSync(join(tmp, file), join(elsewhere, file));
    expect(other.read('main.cjs', source)).toBeNull();
  });

  it("sweeps the files of chunks that no longer exist (under any options) and old unfinished writes, not the others'", () => {
    const store = new CodeCacheStore(tmp);
    store.write('chunk-OLD.cjs', source, Buffer.from('x'));
    store.write('chunk-NEW.cjs', source, Buffer.from('y'));
    writeFileSync(join(tmp, 'unrelated.txt'), '');
    writeFileSync(join(tmp, 'chunk-OLD.cjs.0badcafe.v8cache'), ''); // made under other options
    writeFileSync(join(tmp, 'chunk-NEW.cjs.0badcafe.v8cache'), '');
    const stale = join(tmp, 'chunk-NEW.cjs.0badcafe.v8cache.123.tmp'); // a write that never finished
    const fresh = join(tmp, 'chunk-NEW.cjs.0badcafe.v8cache.456.tmp'); // one that may still be under way
    writeFileSync(stale, '');
    writeFileSync(fresh, '');
    const twoHoursAgo = new Date(Date.now() - 7_200_000);
    utimesSync(stale, twoHoursAgo, twoHoursAgo);
    store.sweep((chunk) => chunk === 'chunk-NEW.cjs');
    expect(readdirSync(tmp).sort()).toEqual([
      'chunk-NEW.cjs.0badcafe.v8cache',
      'chunk-NEW.cjs.0badcafe.v8cache.456.tmp',
      expect.stringMatching(/^chunk-NEW\.cjs\.[0-9a-f]{8}\.v8cache$/),
      'unrelated.txt',
    ]);
  });
});

describe('the chunk loader', () => {
  function bundle(dir: string): void {
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'main.cjs'),
      "const lib = require('./chunk-A.cjs'); module.exports = { answer: lib.twice(21), path: require('node:path').sep };",
    );
    writeFileSync(join(dir, 'chunk-A.cjs'), 'exports.twice = function twice(n) { return n * 2; };');
  }

  it('gives every chunk one instance, whichever chunk requires it and from which directory', () => {
    const dist = join(tmp, 'dist');
    mkdirSync(join(dist, 'vendor'), { recursive: true });
    writeFileSync(join(dist, 'chunk-S.cjs'), 'exports.state = { count: 0 };');
    writeFileSync(
      join(dist, 'vendor', 'lib.cjs'),
      "require('../chunk-S.cjs').state.count++; exports.state = require('../chunk-S.cjs').state;",
    );
    writeFileSync(
      join(dist, 'main.cjs'),
      "const s = require('./chunk-S.cjs').state; s.count++; module.exports = require('./vendor/lib.cjs').state === s ? s.count : -1;",
    );
    const cache = join(tmp, 'cache');
    mkdirSync(cache, { mode: 0o700 });
    const loader = new ChunkLoader(dist, new CodeCacheStore(cache));
    expect(loader.load('main.cjs')).toBe(2);
    loader.writeCache();
    expect(readdirSync(cache).filter((n) => n.startsWith('vendor+lib.cjs.'))).toHaveLength(1);
    const again = new ChunkLoader(dist, new CodeCacheStore(cache));
    expect(again.load('main.cjs')).toBe(2);
    expect(again.stats.fromCache.sort()).toEqual(['chunk-S.cjs', 'main.cjs', 'vendor/lib.cjs']);
  });

  it('compiles and writes the cache the first time, then runs from it', () => {
    const dist = join(tmp, 'dist');
    bundle(dist);
    const cache = join(tmp, 'cache');
    mkdirSync(cache, { mode: 0o700 });
    const first = new ChunkLoader(dist, new CodeCacheStore(cache));
    expect(first.load('main.cjs')).toEqual({ answer: 42, path: '/' });
    expect(first.stats).toMatchObject({ fromCache: [], compiled: ['main.cjs', 'chunk-A.cjs'] });
    first.writeCache();
    expect(first.stats.written.sort()).toEqual(['chunk-A.cjs', 'main.cjs']);
    const second = new ChunkLoader(dist, new CodeCacheStore(cache));
    expect(second.load('main.cjs')).toEqual({ answer: 42, path: '/' });
    expect(second.stats).toMatchObject({ fromCache: ['main.cjs', 'chunk-A.cjs'], compiled: [] });
    second.writeCache();
    expect(second.stats.written).toEqual([]);
  });

  it('compiles as usual and rewrites a cache V8 rejects, and runs a chunk changed since its cache was written', () => {
    const dist = join(tmp, 'dist');
    bundle(dist);
    const cache = join(tmp, 'cache');
    mkdirSync(cache, { mode: 0o700 });
    const store = new CodeCacheStore(cache);
    // Data of another script that passes the file's own checks: V8 refuses it (its source differs in length).
    const wrapped = `(function (exports, require, module, __filename, __dirname) { ${readFileSync(join(dist, 'chunk-A.cjs'))}\n})`;
    const foreign = new Script(`${wrapped}; void 0`).createCachedData();
    store.write('chunk-A.cjs', readFileSync(join(dist, 'chunk-A.cjs')), foreign);
    const loader = new ChunkLoader(dist, store);
    expect(loader.load('main.cjs')).toEqual({ answer: 42, path: '/' });
    expect(loader.stats.compiled).toEqual(['main.cjs', 'chunk-A.cjs']);
    loader.writeCache();
    expect(new CodeCacheStore(cache).read('chunk-A.cjs', readFileSync(join(dist, 'chunk-A.cjs')))).not.toEqual(foreign);
    // The chunk rebuilt: its old cache is not used, the new code runs.
    writeFileSync(join(dist, 'chunk-A.cjs'), 'exports.twice = function twice(n) { return n * 3; };');
    const after = new ChunkLoader(dist, new CodeCacheStore(cache));
    expect(after.load('main.cjs')).toEqual({ answer: 63, path: '/' });
    expect(after.stats).toMatchObject({ fromCache: ['main.cjs'], compiled: ['chunk-A.cjs'] });
  });

  it('runs a chunk whose code failed again at the next load, not its half-run exports', () => {
    const dist = join(tmp, 'dist');
    mkdirSync(dist);
    const flag = join(tmp, 'fail');
    writeFileSync(flag, '');
    writeFileSync(
      join(dist, 'main.cjs'),
      `if (require('node:fs').existsSync(${JSON.stringify(flag)})) throw new Error('not yet'); exports.ready = true;`,
    );
    const loader = new ChunkLoader(dist, null);
    expect(() => loader.load('main.cjs')).toThrow('not yet');
    rmSync(flag);
    expect(loader.load('main.cjs')).toEqual({ ready: true });
  });

  it('runs without a cache directory, writing nothing', () => {
    const dist = join(tmp, 'dist');
    bundle(dist);
    const loader = new ChunkLoader(dist, null);
    expect(loader.load('main.cjs')).toEqual({ answer: 42, path: '/' });
    loader.writeCache();
    expect(loader.stats.written).toEqual([]);
    expect(readdirSync(dist).sort()).toEqual(['chunk-A.cjs', 'main.cjs']);
  });
});
