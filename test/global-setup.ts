import { rmSync } from 'node:fs';
import Docker from 'dockerode';
import { DEFAULT_STACK_IMAGE } from '../src/config/schema.ts';
import { registryCacheDir } from '../src/modules/deployments/registry-packages.ts';
import { ensureBusyboxImage } from '../src/runtime/images.ts';
import { debCacheDir } from '../src/runtime/rootfs.ts';

// The suite needs an engine (Docker-backed tests never skip): without one the run stops here, at
// once, with one message — not after minutes of timeouts (`npm test`'s pretest step provisions one
// where it can). Then the base image is built once for the whole run (offline: scratch + static busybox).
//
// SCALINGO_EMULATOR_TEST_FROM_SCRATCH=1 (what .ci/run sets) first removes every image of the emulator
// and its caches of Debian packages and npm registry packages (Node.js binaries…), as on a new machine: the first-use group (test/first-use/) then
// proves that the emulator builds each image the first time it is needed.
export default async function setup(): Promise<void> {
  const docker = new Docker();
  try {
    await Promise.race([
      docker.ping(),
      new Promise((_, fail) => setTimeout(() => fail(new Error('no answer within 5 s')), 5000).unref()),
    ]);
  } catch (err) {
    throw new Error(
      `no Docker engine answers (${(err as Error).message}). The tests need one: run 'sudo bash scripts/docker-up.sh' (Debian/Ubuntu: installs and starts dockerd), or point DOCKER_HOST at a running engine, then run the tests again.`,
    );
  }
  if (process.env.SCALINGO_EMULATOR_TEST_FROM_SCRATCH === '1') await removeEmulatorImages(docker);
  await ensureBusyboxImage(docker, DEFAULT_STACK_IMAGE);
}

async function removeEmulatorImages(docker: Docker): Promise<void> {
  // An image a container still uses cannot go: say which containers, rather than the engine's 409.
  const running = await docker.listContainers({
    all: true,
    filters: JSON.stringify({ label: ['io.scalingo-emulator.managed'] }),
  });
  if (running.length > 0) {
    const names = running.map((c) => c.Names[0]?.replace(/^\//, '') ?? c.Id.slice(0, 12));
    throw new Error(
      `from scratch: ${running.length} container(s) of an emulator are on the engine (${names.join(', ')}) and use the images this run must remove. Stop that emulator, or remove them (docker rm -f ${names.join(' ')}), then run the tests again.`,
    );
  }
  const images = await docker.listImages({ filters: JSON.stringify({ label: ['io.scalingo-emulator.base'] }) });
  for (const image of images) await docker.getImage(image.Id).remove({ force: true });
  rmSync(debCacheDir(), { recursive: true, force: true });
  rmSync(registryCacheDir(), { recursive: true, force: true });
  console.log(`[global-setup] from scratch: removed ${images.length} emulator image(s) and the package caches`);
}
