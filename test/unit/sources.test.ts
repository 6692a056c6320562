import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import { afterEach, describe, expect, it } from 'vitest';
import {
  entryProblem,
  extractArchive,
  SourceError,
  type SourceLimits,
  timeLimit,
} from '../../src/modules/deployments/archive-extract.ts';
import { prepareSource } from '../../src/modules/deployments/sources.ts';
import { startEmulator } from '../harness.ts';

const LIMITS: SourceLimits = {
  maxArchiveBytes: 1 << 20,
  maxExpandedBytes: 1 << 20,
  maxFileBytes: 64 * 1024,
  maxEntries: 10,
  timeoutMs: 5_000,
};

function tar(entries: { path: string; data?: string; type?: string; linkpath?: string }[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const data = Buffer.from(e.data ?? '');
    const h = new Header({
      path: e.path,
      type: (e.type ?? 'File') as never,
      linkpath: e.linkpath,
      size: data.length,
      mode: 0o644,
      mtime: new Date(),
      uid: 0,
      gid: 0,
    });
    h.encode();
    parts.push(h.block!, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'emu-sources-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function extract(buf: Buffer | Readable, limits = LIMITS) {
  const dest = tmp();
  const { signal, clear } = timeLimit(limits, 'the archive');
  try {
    return {
      dest,
      result: await extractArchive(
        buf instanceof Readable ? buf : Readable.from([buf]),
        dest,
        limits,
        signal,
        'the archive',
      ),
    };
  } finally {
    clear();
  }
}

describe('archive extraction limits', () => {
  it('stops reading at the end-of-archive blocks: an endless tail is never read', async () => {
    let pulled = 0;
    // A valid archive, then zeros without end (what tar's parser used to keep in memory).
    const endless = Readable.from(
      (function* () {
        yield tar([{ path: 'app/a.txt', data: 'hello' }]);
        for (;;) {
          pulled++;
          yield Buffer.alloc(64 * 1024);
        }
      })(),
    );
    const { dest, result } = await extract(endless);
    expect(result.entries).toBe(1);
    expect(readdirSync(join(dest, 'app'))).toEqual(['a.txt']);
    // Far under the 1 MB limit: the stream was stopped, not cut by a limit.
    expect(pulled * 64 * 1024).toBeLessThan(1 << 20);
  });

  it('refuses compressed data inside the tar stream (tar would decompress it out of the meters), even sent a byte at a time', async () => {
    const nested = gzipSync(gzipSync(tar([{ path: 'app/a.txt', data: 'hello' }])));
    await expect(extract(nested)).rejects.toThrow(/holds a compressed archive inside the tar stream/);
    // A zstd frame (which tar would decompress itself) arriving a byte at a time.
    const zstd = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.alloc(1024, 7)]);
    const byteByByte = Readable.from(
      (function* () {
        for (const b of zstd) yield Buffer.from([b]);
      })(),
    );
    await expect(extract(byteByByte)).rejects.toThrow(/holds a compressed archive inside the tar stream/);
  });

  it('extracts a gzip or a plain tar, links inside the directory included', async () => {
    const entries = [
      { path: 'app/a.txt', data: 'hello' },
      { path: 'app/l', type: 'SymbolicLink', linkpath: 'a.txt' },
      { path: 'app/h', type: 'Link', linkpath: 'app/a.txt' },
    ];
    for (const buf of [gzipSync(tar(entries)), tar(entries)]) {
      const { dest, result } = await extract(buf);
      expect(result.entries).toBe(3);
      expect(readdirSync(join(dest, 'app')).sort()).toEqual(['a.txt', 'h', 'l']);
    }
  });

  it('refuses escaping paths and links, devices and FIFOs', () => {
    expect(entryProblem('a/../../x', 'File', undefined)).toMatch(/'\.\.'/);
    expect(entryProblem('/etc/x', 'File', undefined)).toMatch(/absolute/);
    expect(entryProblem('a/l', 'SymbolicLink', '/etc')).toMatch(/absolute/);
    expect(entryProblem('a/l', 'SymbolicLink', '../../x')).toMatch(/outside/);
    expect(entryProblem('a/l', 'SymbolicLink', '../x')).toBeNull();
    expect(entryProblem('a/h', 'Link', '../x')).toMatch(/outside/);
    expect(entryProblem('a/f', 'FIFO', undefined)).toMatch(/FIFO entries are not accepted/);
    expect(entryProblem('a/d', 'CharacterDevice', undefined)).toMatch(/not accepted/);
  });

  it('stops at the entry count, the file size, the expanded size, and on bad data', async () => {
    const many = tar(Array.from({ length: 11 }, (_, i) => ({ path: `f${i}`, data: 'x' })));
    await expect(extract(many)).rejects.toThrow(/more than 10 entries/);
    await expect(extract(tar([{ path: 'big', data: 'x'.repeat(65 * 1024) }]))).rejects.toThrow(
      /big is 0.1 MB: larger than the limit of 0.1 MB per file/,
    );
    const files = tar(Array.from({ length: 9 }, (_, i) => ({ path: `f${i}`, data: 'x'.repeat(60 * 1024) })));
    await expect(extract(gzipSync(files), { ...LIMITS, maxExpandedBytes: 300 * 1024 })).rejects.toThrow(
      /expands to more than 0.3 MB/,
    );
    await expect(extract(files, { ...LIMITS, maxArchiveBytes: 200 * 1024 })).rejects.toThrow(
      /larger than the limit of 0.2 MB/,
    );
    await expect(extract(Buffer.from([0x1f, 0x8b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))).rejects.toThrow(SourceError);
  });

  it('stops a source that never ends at the time limit', async () => {
    const endless = new Readable({ read() {} }); // no data, never ends
    endless.push(Buffer.alloc(512)); // some bytes, then silence
    await expect(extract(endless, { ...LIMITS, timeoutMs: 300 })).rejects.toThrow(/took longer than the limit/);
  });

  it('a local source must exist and be a regular file; git values starting with - are refused', async () => {
    const wd = tmp();
    // What an injected option would write: a path of this test's own, so nothing else on the machine decides.
    const injected = join(wd, 'injected');
    await expect(
      prepareSource({ kind: 'archive', location: '/dev/null' }, join(wd, 'b'), () => undefined, LIMITS),
    ).rejects.toThrow(/character device/);
    await expect(
      prepareSource({ kind: 'archive', location: wd }, join(wd, 'c'), () => undefined, LIMITS),
    ).rejects.toThrow(/directory/);
    await expect(
      prepareSource(
        { kind: 'git', location: `--upload-pack=touch ${injected}` },
        join(wd, 'd'),
        () => undefined,
        LIMITS,
      ),
    ).rejects.toThrow(/not a repository URL/);
    await expect(
      prepareSource(
        { kind: 'git', location: wd, gitRef: `--output=${injected}` },
        join(wd, 'e'),
        () => undefined,
        LIMITS,
      ),
    ).rejects.toThrow(/not a branch/);
    expect(existsSync(injected)).toBe(false);
  });
});

describe('git_source and git_ref validation at the API', () => {
  it('422 for values git would read as options', async () => {
    const h = await startEmulator();
    try {
      const app = await h.call('POST', '/v1/apps', {
        body: { app: { name: 'opt-source', git_source: '--upload-pack=id' } },
      });
      expect(app.status).toBe(422);
      expect(app.body).toEqual({ errors: { git_source: ['is invalid: it cannot start with a hyphen'] } });
      expect((await h.call('GET', '/v1/apps/opt-source')).status).toBe(404);
      expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'plain-app' } } })).status).toBe(201);
      const d = await h.call('POST', '/v1/apps/plain-app/deployments', {
        body: { deployment: { source_url: '/tmp/a.tar.gz', git_ref: '-b' } },
      });
      expect(d.status).toBe(422);
      expect(d.body).toEqual({ errors: { git_ref: ['is invalid: it cannot start with a hyphen'] } });
    } finally {
      await h.stop();
    }
  });
});
