import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exeCacheDir, scriptArgs, unpack } from '../../src/boot/exe-payload.ts';

// What the single executable does before it runs the emulator (src/boot/exe-entry.ts): its cache directory's checks,
// the tree written once, and when it stands for node.
const root = mkdtempSync(join(tmpdir(), 'emu-exe-payload-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('exeCacheDir', () => {
  it('creates EMULATOR_EXE_CACHE_DIR private, and refuses one others can write', () => {
    const dir = join(root, 'private');
    expect(exeCacheDir({ EMULATOR_EXE_CACHE_DIR: dir })).toEqual({ dir });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const open = join(root, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(exeCacheDir({ EMULATOR_EXE_CACHE_DIR: open })).toEqual({
      dir: null,
      reason: `${open} is writable by others (mode 777)`,
    });
  });

  it('defaults to the user cache', () => {
    expect(exeCacheDir({ XDG_CACHE_HOME: join(root, 'xdg') })).toEqual({
      dir: join(root, 'xdg', 'scalingo-emulator', 'exe'),
    });
  });
});

describe('unpack', () => {
  it('writes the files once, reading the payload only then', () => {
    const payload = Buffer.from('{"version":"1"}#!/bin/sh\n');
    const manifest = {
      hash: 'abc123',
      files: [
        { path: 'package.json', offset: 0, size: 15, exec: false },
        { path: 'bin/run', offset: 15, size: 10, exec: true },
      ],
    };
    let reads = 0;
    const read = () => (reads++, payload);
    const tree = unpack(root, manifest, read);
    expect(tree).toBe(join(root, 'abc123'));
    expect(readFileSync(join(tree, 'package.json'), 'utf8')).toBe('{"version":"1"}');
    expect(statSync(join(tree, 'bin/run')).mode & 0o777).toBe(0o700);
    expect(statSync(join(tree, 'package.json')).mode & 0o777).toBe(0o600);
    expect(unpack(root, manifest, read)).toBe(tree);
    expect(reads).toBe(1);
  });
});

describe('scriptArgs', () => {
  it('a first argument naming a file, after --name=value options, is a script to run as node would', () => {
    const script = join(root, 'hook');
    writeFileSync(script, '');
    expect(scriptArgs([script, 'a'])).toEqual({ flags: [], script, rest: ['a'] });
    expect(scriptArgs(['--max-old-space-size=64', script, 'f'])).toEqual({
      flags: ['--max-old-space-size=64'],
      script,
      rest: ['f'],
    });
  });

  it("the emulator's own commands are not scripts", () => {
    expect(scriptArgs([])).toBeNull();
    expect(scriptArgs(['start', '--in-memory'])).toBeNull();
    expect(scriptArgs(['--help'])).toBeNull();
    expect(scriptArgs(['up', root])).toBeNull();
    expect(scriptArgs([root])).toBeNull(); // a directory
  });
});
