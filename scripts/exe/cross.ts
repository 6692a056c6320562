import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// What building the executable for another architecture than this machine's takes (Debian/Ubuntu packages, listed in
// scripts/needs.sh so that `npm test`'s set-up installs them): a cross compiler for better-sqlite3's add-on, and
// QEMU's user-mode emulation to run the target's own Node.js, which makes the blob (the Node.js docs: "the version of
// the Node.js binary used to produce the blob must be the same as the one to which the blob will be injected", and
// the registry publishes some versions for one architecture only). The target's Node.js and the add-on are
// dynamically linked against glibc and libstdc++: QEMU finds the target's in the cross compiler's sysroot.

export interface CrossTarget {
  /** GNU triplet: the compilers are `<triplet>-gcc` / `<triplet>-g++`, the sysroot `/usr/<triplet>`. */
  triplet: string;
  /** QEMU's user-mode emulator for the target. */
  qemu: string;
  /** The Debian packages that bring them (g++-<triplet> pulls the target's libc, libstdc++ and their headers). */
  packages: string[];
}

const TARGETS: Record<'x64' | 'arm64', CrossTarget> = {
  arm64: { triplet: 'aarch64-linux-gnu', qemu: 'qemu-aarch64', packages: ['g++-aarch64-linux-gnu', 'qemu-user'] },
  x64: { triplet: 'x86_64-linux-gnu', qemu: 'qemu-x86_64', packages: ['g++-x86-64-linux-gnu', 'qemu-user'] },
};

/** The toolchain for `arch`, checked on `env`'s PATH: a missing tool is an error naming the packages to install. */
export function crossTarget(arch: 'x64' | 'arm64', env: NodeJS.ProcessEnv = process.env): CrossTarget {
  const target = TARGETS[arch];
  const missing = [`${target.triplet}-gcc`, `${target.triplet}-g++`, target.qemu].filter((tool) => !onPath(tool, env));
  if (!existsSync(sysroot(target))) missing.push(sysroot(target));
  if (missing.length > 0)
    throw new Error(
      `building for linux-${arch} on linux-${process.arch} needs ${missing.join(', ')}: ` +
        `apt-get install --no-install-recommends ${target.packages.join(' ')} (or sudo bash scripts/docker-up.sh)`,
    );
  return target;
}

/** The environment node-gyp's make build reads its compilers from. */
export const compilerEnv = (target: CrossTarget): Record<string, string> => ({
  CC: `${target.triplet}-gcc`,
  CXX: `${target.triplet}-g++`,
});

/** The command that runs one of the target's programs here: `[qemu, -L, sysroot, program]`. */
export const underEmulation = (target: CrossTarget, program: string): string[] => [
  target.qemu,
  '-L',
  sysroot(target),
  program,
];

const sysroot = (target: CrossTarget) => `/usr/${target.triplet}`;

const onPath = (tool: string, env: NodeJS.ProcessEnv) =>
  spawnSync(tool, ['--version'], { stdio: 'ignore', env }).error === undefined;
