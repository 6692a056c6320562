import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { x } from 'tar';
import { afterAll, describe, expect, it } from 'vitest';
import { packTree } from '../../src/runtime/images.ts';

// The archive a Node.js image's layer is made of (node-runtime.ts): several directories under their
// own paths, the directories leading to them, links, and the links' targets executable.
const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'emu-pack-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('packTree', () => {
  it('puts each directory under its path, adds the links, makes their targets executable', async () => {
    const node = temp();
    mkdirSync(join(node, 'bin'));
    writeFileSync(join(node, 'bin', 'node'), 'ELF');
    chmodSync(join(node, 'bin', 'node'), 0o755);
    const npm = temp();
    mkdirSync(join(npm, 'bin'));
    writeFileSync(join(npm, 'bin', 'npm-cli.js'), '#!/usr/bin/env node\n');
    chmodSync(join(npm, 'bin', 'npm-cli.js'), 0o644);
    writeFileSync(join(npm, 'package.json'), '{}');
    const tar = await packTree(
      [
        { from: join(node, 'bin'), to: 'bin' },
        { from: npm, to: 'lib/node_modules/npm' },
      ],
      {
        symlinks: { 'bin/npm': '../lib/node_modules/npm/bin/npm-cli.js' },
        hardlinks: { 'bin/node2': 'bin/node' },
        dirs: ['lib/nodejs'],
      },
    );
    const out = temp();
    await pipeline(tar, x({ cwd: out }));
    expect(readFileSync(join(out, 'bin', 'node'), 'utf8')).toBe('ELF');
    expect(lstatSync(join(out, 'bin', 'node')).mode & 0o777).toBe(0o755);
    expect(lstatSync(join(out, 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js')).mode & 0o777).toBe(0o755);
    expect(lstatSync(join(out, 'lib', 'node_modules', 'npm', 'package.json')).mode & 0o777).toBe(0o644);
    expect(readlinkSync(join(out, 'bin', 'npm'))).toBe('../lib/node_modules/npm/bin/npm-cli.js');
    expect(readFileSync(join(out, 'bin', 'npm'), 'utf8')).toBe('#!/usr/bin/env node\n');
    expect(lstatSync(join(out, 'bin', 'node2')).ino).toBe(lstatSync(join(out, 'bin', 'node')).ino);
    expect(lstatSync(join(out, 'lib', 'nodejs')).isDirectory()).toBe(true);
  });

  it('fails the stream when a directory cannot be read', async () => {
    const tar = await packTree([{ from: join(temp(), 'missing'), to: 'x' }]);
    await expect(
      new Promise((ok, fail) => {
        tar.on('error', fail);
        tar.on('end', ok);
        tar.resume();
      }),
    ).rejects.toThrow(/ENOENT/);
  });
});
