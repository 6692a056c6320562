// Deployment sources as a hostile local user would give them (issue #10, defects 2, 11, 12): the
// emulator runs as a separate process whose memory is read from /proc. Every source is refused or
// cut by a limit while it is read, the deployment ends `build-error` with a clear message, nothing is
// written outside the build directory, no API answer is a 500, and the build directory is removed.

import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatorProcess, MB, mb, poll, spawnEmulator } from './emulator-process.ts';

// Reduced caps so the suite writes little to disk; memory does not depend on them (streams).
// Every source here fails before a build: no container or image is made.
const LIMITS = {
  maxArchiveBytes: 64 * MB,
  maxExpandedBytes: 256 * MB,
  maxFileBytes: 128 * MB,
  maxEntries: 1000,
  timeoutMs: 30_000,
};

type Entry = {
  path: string;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link';
  linkpath?: string;
  data?: Buffer;
  size?: number;
};

function header(e: Entry): Buffer {
  const h = new Header({
    path: e.path,
    type: e.type ?? 'File',
    linkpath: e.linkpath,
    size: e.size ?? e.data?.length ?? 0,
    mode: e.type === 'Directory' ? 0o755 : 0o644,
    mtime: new Date(),
    uid: 0,
    gid: 0,
  });
  h.encode();
  return h.block!;
}

/** A tar (gzip-compressed) written entry by entry, so escaping paths stay as given. */
function tarGz(entries: Entry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    parts.push(header(e));
    if (e.data?.length) parts.push(e.data, Buffer.alloc((512 - (e.data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}

describe('hostile deployment sources (emulator as a separate process)', () => {
  let dir: string;
  let emu: EmulatorProcess;
  let outside: string;
  let httpServer: Server;
  let httpPort: number;
  let unixServer: NetServer;
  const statuses: number[] = [];
  const figures: string[] = [];
  let idle = 0;

  const call = async (method: string, path: string, opts: { body?: unknown } = {}) => {
    const r = await emu.call(method, path, opts);
    statuses.push(r.status);
    return r;
  };

  /** Deploys `source_url` on a fresh app and waits for the deployment to end: its status and output. */
  let n = 0;
  async function deploy(sourceUrl: string): Promise<{ status: string; output: string }> {
    const app = `hostile-${++n}-${randomBytes(2).toString('hex')}`;
    expect((await call('POST', '/v1/apps', { body: { app: { name: app } } })).status).toBe(201);
    const created = await call('POST', `/v1/apps/${app}/deployments`, {
      body: { deployment: { source_url: sourceUrl } },
    });
    expect(created.status).toBe(201);
    const id = created.body.deployment.id as string;
    const done = await poll(
      async () => {
        const r = await call('GET', `/v1/apps/${app}/deployments/${id}`);
        return ['build-error', 'crashed-error', 'success', 'timeout-error'].includes(r.body?.deployment?.status)
          ? r.body.deployment
          : null;
      },
      `deployment of ${sourceUrl}`,
      60_000,
    );
    const output = (await call('GET', `/v1/apps/${app}/deployments/${id}/output`)).text;
    expect((await call('DELETE', `/v1/apps/${app}?current_name=${app}`)).status).toBe(204);
    return { status: done.status, output };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emu-hostile-'));
    outside = join(dir, 'outside');
    mkdirSync(outside);
    mkdirSync(join(dir, 'data'));
    emu = await spawnEmulator(join(dir, 'data'), { sources: LIMITS });
    // Endless HTTP sources: an uncompressed tar of 1 MB random files, for ever; and a huge Content-Length.
    httpServer = createHttpServer((req, res) => {
      res.on('error', () => undefined);
      if (req.url === '/declared-huge.tar.gz') {
        res.writeHead(200, { 'content-length': String(10 * 1024 * MB) });
        res.write(Buffer.alloc(1024));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/gzip' });
      let i = 0;
      const pump = () => {
        while (!res.destroyed) {
          const data = randomBytes(MB);
          const ok = res.write(Buffer.concat([header({ path: `endless/f${i++}.bin`, data }), data]));
          if (!ok) return void res.once('drain', pump);
        }
      };
      pump();
    });
    await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', () => r()));
    httpPort = (httpServer.address() as { port: number }).port;
    unixServer = createNetServer(() => undefined);
    await new Promise<void>((r) => unixServer.listen(join(dir, 'archive.sock'), () => r()));
    idle = emu.memory().rss;
  }, 60_000);

  afterAll(async () => {
    await emu?.stop();
    httpServer?.closeAllConnections?.();
    httpServer?.close();
    unixServer?.close();
    rmSync(dir, { recursive: true, force: true });
    console.log(`[reliability] hostile sources: ${figures.join('; ')}`);
  });

  it('refuses devices, FIFOs and sockets before reading them; logins go on meanwhile', async () => {
    execFileSync('mkfifo', [join(dir, 'archive.fifo')]);
    symlinkSync('/dev/zero', join(dir, 'zero-link.tar.gz'));
    const cases: [string, RegExp][] = [
      ['/dev/zero', /character device/],
      [join(dir, 'zero-link.tar.gz'), /character device/],
      [`file://${join(dir, 'archive.fifo')}`, /FIFO/],
      [join(dir, 'archive.sock'), /socket/],
      [dir, /directory/],
      [join(dir, 'missing.tar.gz'), /does not exist/],
    ];
    for (const [src, message] of cases) {
      const d = await deploy(src);
      expect(d.status, src).toBe('build-error');
      expect(d.output, src).toMatch(message);
    }
    // Nothing holds the FIFO open: a login (scrypt, on the same thread pool as file reads) answers.
    const login = await emu.call('POST', '/v1/tokens/exchange', { as: 'dev' });
    expect(login.status).toBe(200);
  }, 120_000);

  it('cuts gzip bombs while decompressing: one huge file, and many files past the expanded limit', async () => {
    const zeros = gzipSync(Buffer.alloc(64 * MB), { level: 9 }); // one gzip member: 64 MB of zeros in ~64 KB
    const member = (b: Buffer) => gzipSync(b);
    // 100 × 64 MB = 6.4 GB of zeros in a single declared file.
    const single = [
      member(header({ path: 'bomb/zeros.bin', size: 100 * 64 * MB })),
      ...Array(100).fill(zeros),
      member(Buffer.alloc(1024)),
    ];
    // 100 files of 64 MB each (under the per-file limit): the total is cut at the expanded limit.
    const many = Array.from({ length: 100 }, (_, i) => [
      member(header({ path: `bomb/z${i}.bin`, size: 64 * MB })),
      zeros,
    ]).flat();
    many.push(member(Buffer.alloc(1024)));
    writeFileSync(join(dir, 'single-bomb.tar.gz'), Buffer.concat(single));
    writeFileSync(join(dir, 'many-bomb.tar.gz'), Buffer.concat(many));
    const sizes = ['single', 'many'].map((k) => statSync(join(dir, `${k}-bomb.tar.gz`)).size);
    figures.push(`bombs of ${sizes.map(mb).join(' and ')} declaring 6.4 GB each`);
    const one = await deploy(join(dir, 'single-bomb.tar.gz'));
    expect(one.status).toBe('build-error');
    expect(one.output).toMatch(/zeros\.bin is 6400 MB: larger than the limit of 128 MB per file/);
    const all = await deploy(join(dir, 'many-bomb.tar.gz'));
    expect(all.status).toBe('build-error');
    expect(all.output).toMatch(/expands to more than 256 MB \(the limit\)/);
  }, 120_000);

  it('streams HTTP sources: an endless body is cut at the size limit, a huge Content-Length refused at once', async () => {
    const endless = await deploy(`http://127.0.0.1:${httpPort}/endless.tar`);
    expect(endless.status).toBe('build-error');
    expect(endless.output).toMatch(/larger than the limit of 64 MB/);
    const declared = await deploy(`http://127.0.0.1:${httpPort}/declared-huge.tar.gz`);
    expect(declared.status).toBe('build-error');
    expect(declared.output).toMatch(/10240 MB: larger than the limit/);
  }, 120_000);

  it('refuses `..`, absolute paths, and symbolic or hard links leading out of the build directory', async () => {
    const data = Buffer.from('pwned\n');
    const cases: [string, Entry[], RegExp][] = [
      [
        'dotdot',
        [
          { path: 'app/', type: 'Directory' },
          { path: 'app/../../../outside/dotdot.txt', data },
        ],
        /paths with '\.\.' are not accepted/,
      ],
      ['absolute', [{ path: join(outside, 'absolute.txt'), data }], /absolute paths are not accepted/],
      [
        'symlink-abs',
        [
          { path: 'app/out', type: 'SymbolicLink', linkpath: outside },
          { path: 'app/out/symlink.txt', data },
        ],
        /link to an absolute path/,
      ],
      [
        'symlink-rel',
        [
          { path: 'app/up', type: 'SymbolicLink', linkpath: '../../../../outside' },
          { path: 'app/up/symlink.txt', data },
        ],
        /link pointing outside/,
      ],
      [
        'hardlink',
        [{ path: 'app/hard', type: 'Link', linkpath: '../../../outside/target.txt' }],
        /link pointing outside/,
      ],
    ];
    writeFileSync(join(outside, 'target.txt'), 'original\n');
    for (const [name, entries, message] of cases) {
      writeFileSync(join(dir, `${name}.tar.gz`), tarGz(entries));
      const d = await deploy(join(dir, `${name}.tar.gz`));
      expect(d.status, name).toBe('build-error');
      expect(d.output, name).toMatch(message);
    }
    expect(readdirSync(outside)).toEqual(['target.txt']);
    expect(statSync(join(outside, 'target.txt')).nlink).toBe(1);
  }, 120_000);

  it('git_source: an option-like value is refused with 422; a repository with an escaping link fails the build', async () => {
    const bad = await call('POST', '/v1/apps', {
      body: { app: { name: 'hostile-git-option', git_source: `--upload-pack=touch ${join(outside, 'pwned')}` } },
    });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ errors: { git_source: [expect.stringMatching(/hyphen/)] } });
    const repo = join(dir, 'repo');
    mkdirSync(repo);
    const git = (...a: string[]) =>
      execFileSync('git', ['-C', repo, ...a], {
        stdio: 'ignore',
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: 't',
          GIT_AUTHOR_EMAIL: 't@t',
          GIT_COMMITTER_NAME: 't',
          GIT_COMMITTER_EMAIL: 't@t',
        },
      });
    git('init', '-q');
    writeFileSync(join(repo, 'Procfile'), 'web: httpd -f -p $PORT\n');
    symlinkSync('/etc/passwd', join(repo, 'passwd'));
    git('add', '.');
    git('commit', '-qm', 'escaping link');
    const created = await call('POST', '/v1/apps', {
      body: { app: { name: 'hostile-git-link', git_source: `file://${repo}` } },
    });
    expect(created.status).toBe(201);
    const d = await poll(async () => {
      const r = await call('GET', '/v1/apps/hostile-git-link/deployments');
      const first = r.body?.deployments?.[0];
      return first && first.status === 'build-error' ? first : null;
    }, 'the git deployment to fail');
    expect((await call('GET', `/v1/apps/hostile-git-link/deployments/${d.id}/output`)).text).toMatch(
      /passwd: a link to an absolute path/,
    );
    expect((await call('DELETE', '/v1/apps/hostile-git-link?current_name=hostile-git-link')).status).toBe(204);
    expect(existsSync(join(outside, 'pwned'))).toBe(false);
  }, 60_000);

  it('afterwards: no 500 was answered, build directories are gone, memory stayed bounded', async () => {
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    const builds = join(dir, 'data', 'builds');
    await poll(
      async () => !existsSync(builds) || readdirSync(builds).length === 0,
      'the build directories to be removed',
      10_000,
    );
    const health = await emu.call('GET', '/_emulator/health', { as: null });
    expect(health.status).toBe(200);
    const { rss, peak } = emu.memory();
    figures.push(`RSS idle ${mb(idle)}, after ${mb(rss)}, peak (VmHWM) ${mb(peak)} over ${statuses.length} API calls`);
    expect(peak).toBeLessThan(512 * MB);
    // The process is still the one started (no crash and restart in between).
    expect(spawnSync('kill', ['-0', String(emu.pid)]).status).toBe(0);
  });
});
