// `npm run image` → `scalingo-emulator:<version>`: the emulator as a container image, for CI services and compose. Built
// as the other images (src/runtime/image-recipes.ts): a Debian minbase root filesystem made by mmdebstrap from the
// machine's mirror (src/runtime/rootfs.ts) and imported into the engine, nothing pulled; on top, the single executable
// (scripts/build-exe.ts) with its files already written out, and the entrypoint that checks the container's set-up.
// The image is kept while its hash label (recipe, executable, entrypoint) is the same.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { r as appendToTar } from 'tar';
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { type ImageRecipe, RECIPE_LABEL, recipeHash } from '../../src/runtime/image-recipes.ts';
import { buildRootfs, debianSuite, removeBuildDir } from '../../src/runtime/rootfs.ts';
import { type ContainerRuntime } from '../../src/runtime/runtime.ts';
import { VERSION } from '../../src/version.ts';
import { buildExe } from '../build-exe.ts';
import { EXE_CACHE, hostArch } from '../exe/node-binary.ts';

export const EMULATOR_IMAGE = `scalingo-emulator:${VERSION}`;
/** Where the executable's files are in the image (EMULATOR_EXE_CACHE_DIR): written at build time, not at each start. */
const EXE_FILES = '/opt/scalingo-emulator';
const ENTRYPOINT = join(import.meta.dirname, 'entrypoint.sh');

const recipe: ImageRecipe = {
  id: 'emulator',
  title: 'Scalingo emulator',
  tag: EMULATOR_IMAGE,
  // buildRootfs reads the packages and hooks only; the emulator is neither a stack nor an addon server.
  kind: 'stack',
  // git: the git push endpoint and git_source deployments; busybox-static: the emulator's base image (FROM scratch +
  // a static busybox, src/runtime/images.ts) and the health check's wget; tini: PID 1 reaps the emulator's children.
  packages: ['ca-certificates', 'git', 'busybox-static', 'tini'],
  customize: ['mkdir -p /data'],
  changes: [
    'ENV EMULATOR_DATA_DIR=/data',
    `ENV EMULATOR_EXE_CACHE_DIR=${EXE_FILES}`,
    'ENV LANG=C.UTF-8',
    'WORKDIR /data',
    'VOLUME /data',
    'ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/emulator-entrypoint"]',
    'CMD ["start"]',
    // Every second: the health the issue asks an orchestrator to wait on; busybox's wget costs a millisecond.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the health check's shell expands it, in the container
    'HEALTHCHECK --interval=1s --timeout=2s --retries=3 CMD busybox wget -q -O /dev/null "http://127.0.0.1:${EMULATOR_PORT:-5100}/_emulator/health"',
  ],
};

/** Builds the image unless the engine has it from the same recipe and executable; returns whether it built. */
export async function ensureEmulatorImage(runtime: ContainerRuntime, say = console.log): Promise<boolean> {
  const arch = hostArch();
  if (arch !== 'x64' && arch !== 'arm64') throw new Error(`no executable for linux-${arch}`);
  const exe = await buildExe(arch);
  const suite = debianSuite();
  const hash = createHash('sha256')
    .update(recipeHash(recipe, suite))
    .update(readFileSync(`${exe}.inputs`))
    .update(readFileSync(ENTRYPOINT))
    .digest('hex')
    .slice(0, 16);
  if ((await runtime.imageLabels(EMULATOR_IMAGE))?.[RECIPE_LABEL] === hash) return false;
  const dir = mkdtempSync(join(tmpdir(), `scalingo-emu-rootfs-emulator-${process.pid}-`));
  try {
    const tar = join(dir, 'rootfs.tar');
    await debianRootfs(suite, tar, say);
    const files = join(dir, 'files');
    mkdirSync(join(files, 'usr/local/bin'), { recursive: true });
    copyFileSync(exe, join(files, 'usr/local/bin/scalingo-emulator'));
    copyFileSync(ENTRYPOINT, join(files, 'usr/local/bin/emulator-entrypoint'));
    // The executable writes its files out once (into a private directory): here, so that a container starts at once.
    mkdirSync(join(files, EXE_FILES), { recursive: true, mode: 0o700 });
    const unpack = spawnSync(exe, ['--help'], {
      env: { PATH: '/usr/bin:/bin', EMULATOR_EXE_CACHE_DIR: join(files, EXE_FILES) },
      encoding: 'utf8',
    });
    if (unpack.status !== 0) throw new Error(`the executable did not run: ${unpack.stderr}`);
    await appendToTar({ file: tar, cwd: files }, [
      'usr/local/bin/scalingo-emulator',
      'usr/local/bin/emulator-entrypoint',
      EXE_FILES.slice(1),
    ]);
    say('importing the root filesystem into Docker');
    await runtime.importImage({
      tarPath: tar,
      tag: EMULATOR_IMAGE,
      changes: [...recipe.changes, `LABEL ${RECIPE_LABEL}=${hash}`, 'LABEL io.scalingo-emulator.base=debian'],
    });
    return true;
  } finally {
    removeBuildDir(dir);
  }
}

/**
 * The Debian part of the image, kept by its recipe hash (node_modules/.cache/scalingo-emulator-exe/): a new executable
 * or entrypoint (every change of the sources) re-imports the image without making its root filesystem again.
 */
async function debianRootfs(suite: string, out: string, say: (line: string) => void): Promise<void> {
  const kept = join(EXE_CACHE, `rootfs-${recipe.id}-${recipeHash(recipe, suite)}.tar`);
  if (!existsSync(kept)) {
    // mmdebstrap picks its output format by the extension: the stage ends in .tar too.
    const made = kept.replace(/\.tar$/, `.${process.pid}.tmp.tar`);
    mkdirSync(EXE_CACHE, { recursive: true });
    try {
      await buildRootfs(recipe, suite, made, say);
      renameSync(made, kept);
    } finally {
      rmSync(made, { force: true });
    }
  }
  copyFileSync(kept, out);
}

if (process.argv[1] === import.meta.filename) {
  const runtime = createDockerRuntime();
  try {
    const built = await ensureEmulatorImage(runtime, (l) => console.log(`${EMULATOR_IMAGE}: ${l}`));
    console.log(`${EMULATOR_IMAGE}: ${built ? 'built' : 'up to date'}`);
  } catch (err) {
    console.error(`${EMULATOR_IMAGE}: not built: ${(err as Error).message}`);
    process.exitCode = 1;
  } finally {
    await runtime.close();
  }
}
