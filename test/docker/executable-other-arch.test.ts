import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, copyFileSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import semver from 'semver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExe } from '../../scripts/build-exe.ts';
import { crossTarget, underEmulation } from '../../scripts/exe/cross.ts';
import { hostArch } from '../../scripts/exe/node-binary.ts';
import { RECOMMENDED_LTS_RANGE } from '../../src/modules/deployments/node-versions.ts';
import { VERSION } from '../../src/version.ts';
import { expectStartDeployServe } from '../support/executable-checks.ts';

// The single executable of the other architecture (`npm run build:exe -- --arch arm64` on an x64 machine: better-sqlite3
// cross-compiled, the blob made by the target's Node under QEMU), run here under QEMU's user-mode emulation with the
// cross compiler's sysroot for its glibc and libstdc++. It talks to this machine's engine through its socket, as the
// executable does on an arm64 machine. test/docker/executable.test.ts covers every command with this machine's own file.
const LONG = 1_200_000; // the first build compiles SQLite with the cross compiler: minutes on two busy cores
const other = hostArch() === 'arm64' ? 'x64' : 'arm64';
/** ELF e_machine of each architecture (the System V ABI's numbers): 62 x86-64, 183 AArch64. */
const E_MACHINE = { x64: 62, arm64: 183 } as const;
const scratch = mkdtempSync(join(tmpdir(), 'emu-exe-other-'));
const exe = join(scratch, 'scalingo-emulator');
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: scratch,
  XDG_CACHE_HOME: join(scratch, 'cache'),
  NO_COLOR: '1',
  ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
};
let command: string[] = [];

beforeAll(async () => {
  // Built once per content (kept in dist/ while its inputs are the same).
  copyFileSync(await buildExe(other), exe);
  chmodSync(exe, 0o755);
  command = underEmulation(crossTarget(other), exe);
}, LONG);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe(`the linux-${other} executable, under QEMU user-mode emulation`, () => {
  it(`is a linux-${other} ELF file: --version says its Node.js runs as ${other}, --help prints the usage`, () => {
    const header = Buffer.alloc(20);
    const fd = openSync(exe, 'r');
    readSync(fd, header, 0, 20, 0);
    closeSync(fd);
    expect(header.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    expect(header.readUInt16LE(18)).toBe(E_MACHINE[other]);
    const run = (arg: string) =>
      spawnSync(command[0], [...command.slice(1), arg], { env, cwd: scratch, encoding: 'utf8' });
    const version = run('--version');
    expect(version.status, version.stderr).toBe(0);
    const said = /^scalingo-emulator (\S+) \(Node\.js v(\S+), (\S+)\)$/.exec(version.stdout.trim());
    expect(said?.slice(1), version.stdout).toEqual([VERSION, expect.any(String), `linux-${other}`]);
    expect(semver.satisfies(said?.[2] ?? '', RECOMMENDED_LTS_RANGE), `Node.js ${said?.[2]}`).toBe(true);
    const help = run('--help');
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: scalingo-emulator \[start\]/m);
  });

  it(
    'start: the API answers on its SQLite file, an app deploys on this machine’s engine and the router serves it',
    () =>
      expectStartDeployServe(
        { argv: command, env, cwd: scratch, startTimeoutMs: 180_000 },
        join(scratch, 'data'),
        'exe-other',
        300_000,
      ),
    LONG,
  );
});
