import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { crossTarget, underEmulation } from '../../scripts/exe/cross.ts';

// The other architecture's toolchain (scripts/exe/cross.ts): what `npm run build:exe -- --arch arm64` says on a machine
// without it, and how it runs the target's programs. test/docker/executable-other-arch.test.ts builds and runs the file.
const empty = mkdtempSync(join(tmpdir(), 'emu-exe-cross-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

describe('crossTarget', () => {
  it('names the missing tools and the Debian packages that bring them', () => {
    // The sysroot is named too where the cross libraries are not installed (it is looked for by path, not on PATH).
    expect(() => crossTarget('arm64', { PATH: empty })).toThrow(
      new RegExp(
        `^building for linux-arm64 on linux-${process.arch} needs aarch64-linux-gnu-gcc, aarch64-linux-gnu-g\\+\\+, ` +
          'qemu-aarch64(, /usr/aarch64-linux-gnu)?: apt-get install --no-install-recommends g\\+\\+-aarch64-linux-gnu qemu-user ' +
          '\\(or sudo bash scripts/docker-up.sh\\)$',
      ),
    );
  });

  it('runs a target program through QEMU with the cross sysroot', () => {
    const target = { triplet: 'aarch64-linux-gnu', qemu: 'qemu-aarch64', packages: [] };
    expect(underEmulation(target, '/x/node')).toEqual(['qemu-aarch64', '-L', '/usr/aarch64-linux-gnu', '/x/node']);
  });
});
