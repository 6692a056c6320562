// A full disk under the data directory (issue #23, item 5): the emulator (a separate process) keeps
// its data on a 32 MB tmpfs that a filler file fills during API writes, during log ingestion and
// during a build. Writes answer 507 {error} naming the full disk (never 500), reads go on, what was
// acknowledged before is kept, SQLite passes `PRAGMA integrity_check`, and everything resumes once
// space returns. Mounting a tmpfs needs root (CI runs as root): without it the test fails at once.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statfsSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { Header } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatorProcess, MB, poll, spawnEmulator } from './emulator-process.ts';
import { createApp, postDeployment, waitForDeployment } from './support/deployments.ts';

const DISK_FULL = /disk holding the emulator's data directory is full \(no space left on device\)/;

/** Fills the file system holding `dir` with a file (1 MB writes, then 4 KB ones) until ENOSPC; its path. */
function fill(dir: string, leaveBytes = 0): string {
  const path = join(dir, 'filler.bin');
  const fd = openSync(path, 'w');
  try {
    for (const size of [MB, 4096]) {
      const chunk = Buffer.alloc(size, 1);
      for (;;) {
        if (statfsSync(dir).bavail * statfsSync(dir).bsize - size < leaveBytes) break;
        try {
          writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

describe('a full disk under the data directory (emulator as a separate process, data on a tmpfs)', () => {
  let root: string;
  let data: string;
  let mounted = false;
  let emu: EmulatorProcess;
  let routerPort = 0;
  const figures: string[] = [];
  const acknowledged: { app: string; key: string }[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'emu-disk-full-'));
    data = join(root, 'data');
    mkdirSync(data);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m,mode=0700', 'tmpfs', data], { stdio: 'pipe' });
      mounted = true;
    } catch (err) {
      throw new Error(
        `cannot mount a tmpfs for the data directory (root is needed): ${(err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message}`,
      );
    }
    emu = await spawnEmulator(data, { logLevel: 'error' });
    routerPort = Number(/Router\s+http:\/\/<app>\.localhost:(\d+)/.exec(emu.output())?.[1] ?? 0);
    if (!routerPort) throw new Error(`the router port is not in the emulator's output:\n${emu.output()}`);
  }, 60_000);

  afterAll(async () => {
    await emu?.stop();
    if (mounted) {
      // SQLite's own check of every page and index, on the file the emulator left.
      const db = new Database(join(data, 'emulator.sqlite'), { readonly: true });
      const check = db.pragma('integrity_check', { simple: true });
      db.close();
      figures.push(`PRAGMA integrity_check: ${check}`);
      execFileSync('umount', [data]);
      expect(check).toBe('ok');
    }
    rmSync(root, { recursive: true, force: true });
    console.log(`[reliability] disk full: ${figures.join('; ')}`);
  });

  it('API writes answer 507 {error} while the disk is full, reads go on, writes resume once space returns', async () => {
    for (let i = 0; i < 3; i++) {
      const app = await createApp(emu, 'kept');
      expect(
        (await emu.call('POST', `/v1/apps/${app}/variables`, { body: { variable: { name: 'KEPT', value: `v${i}` } } }))
          .status,
      ).toBe(201);
      acknowledged.push({ app, key: `v${i}` });
    }
    const filler = fill(data);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await emu.call('POST', '/v1/apps', {
        body: { app: { name: `full-${i}-${randomBytes(2).toString('hex')}` } },
      });
      statuses.push(r.status);
      if (r.status === 507) expect(r.body).toEqual({ error: expect.stringMatching(DISK_FULL) });
      const v = await emu.call('POST', `/v1/apps/${acknowledged[0].app}/variables`, {
        body: { variable: { name: `FULL_${i}`, value: 'x'.repeat(4096) } },
      });
      statuses.push(v.status);
    }
    figures.push(
      `API writes on a full disk: ${statuses.filter((s) => s === 507).length}/${statuses.length} answered 507, the others ${[...new Set(statuses.filter((s) => s !== 507))].join(', ') || 'none'}`,
    );
    expect(statuses.filter((s) => s >= 500 && s !== 507)).toEqual([]);
    expect(statuses).toContain(507);
    // Reads need no space.
    expect((await emu.call('GET', '/v1/apps')).status).toBe(200);
    rmSync(filler);
    const after = await emu.call('POST', '/v1/apps', {
      body: { app: { name: `after-${randomBytes(2).toString('hex')}` } },
    });
    expect(after.status).toBe(201);
    for (const { app, key } of acknowledged) {
      const vars = (await emu.call('GET', `/v1/apps/${app}/variables`)).body.variables as {
        name: string;
        value: string;
      }[];
      expect(vars.find((v) => v.name === 'KEPT')?.value).toBe(key);
    }
  });

  it('log ingestion: router lines are dropped while the disk is full, the router answers, lines are stored again afterwards', async () => {
    const app = acknowledged[1].app;
    // node:http, which sends the Host header given (fetch replaces it).
    const hit = (path: string) =>
      new Promise<number>((ok, fail) => {
        const req = httpGet(
          { host: '127.0.0.1', port: routerPort, path, headers: { host: `${app}.localhost` } },
          (res) => {
            res.resume();
            ok(res.statusCode ?? 0);
          },
        );
        req.on('error', fail);
      });
    expect((await emu.call('PATCH', `/v1/apps/${app}`, { body: { app: { router_logs: true } } })).status).toBe(200);
    const logsUrl = (await emu.call('GET', `/v1/apps/${app}/logs`)).body.logs_url as string;
    const read = async () => (await fetch(`${logsUrl}&n=1000`)).text();
    expect(await hit('/before-full')).toBe(503); // no web container: the router answers itself, and logs the request
    await poll(async () => (await read()).includes('/before-full'), 'the access line before the disk fills', 10_000);
    const filler = fill(data);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => hit(`/while-full-${i}`)));
    expect(new Set(answers)).toEqual(new Set([503]));
    expect((await emu.call('GET', '/_emulator/health', { as: null })).status).toBe(200);
    rmSync(filler);
    expect(await hit('/after-full')).toBe(503);
    await poll(async () => (await read()).includes('/after-full'), 'the access line after space returned', 10_000);
    const text = await read();
    figures.push(
      `log ingestion: ${(text.match(/while-full-/g) ?? []).length}/50 lines written while full were stored, ingestion resumed`,
    );
  });

  it('a build that fills the disk ends build-error naming the full disk, its directory removed', async () => {
    // 24 MB of incompressible data in an archive kept off the tmpfs: more than the space left.
    const h = new Header({ path: 'app/big.bin', type: 'File', size: 24 * MB, mode: 0o644, mtime: new Date() });
    h.encode();
    if (!h.block) throw new Error('tar header not encoded');
    const archive = join(root, 'big.tar.gz');
    writeFileSync(archive, gzipSync(Buffer.concat([h.block, randomBytes(24 * MB), Buffer.alloc(1024)]), { level: 1 }));
    const filler = fill(data, 8 * MB);
    try {
      const app = await createApp(emu, 'build-full');
      const d = await waitForDeployment(emu, app, await postDeployment(emu, app, archive), 60_000);
      expect(d.status).toBe('build-error');
      expect(d.output).toMatch(DISK_FULL);
      figures.push('a build filling the disk: build-error, "disk … is full" in its output');
      const builds = join(data, 'builds');
      await poll(
        async () => !existsSync(builds) || readdirSync(builds).length === 0,
        'the build directory to be removed',
        10_000,
      );
    } finally {
      rmSync(filler, { force: true });
    }
    expect(
      (await emu.call('POST', '/v1/apps', { body: { app: { name: `recovered-${randomBytes(2).toString('hex')}` } } }))
        .status,
    ).toBe(201);
  }, 90_000);
});
