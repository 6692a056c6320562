import Docker from 'dockerode';
import { ensureBusyboxImage } from '../src/runtime/images.ts';
import { DEFAULT_STACK_IMAGE } from '../src/config/schema.ts';

// Builds the base image once for the whole run (offline: scratch + static busybox). The suite needs
// an engine (Docker-backed tests never skip): without one the run stops here, at once, with one
// message — not after minutes of timeouts (`npm test`'s pretest step provisions one where it can).
export default async function setup(): Promise<void> {
  const docker = new Docker();
  try {
    await Promise.race([docker.ping(), new Promise((_, fail) => setTimeout(() => fail(new Error('no answer within 5 s')), 5000).unref())]);
  } catch (err) {
    throw new Error(
      `no Docker engine answers (${(err as Error).message}). The tests need one: run 'sudo bash scripts/docker-up.sh' (Debian/Ubuntu: installs and starts dockerd), or point DOCKER_HOST at a running engine, then run the tests again.`,
    );
  }
  await ensureBusyboxImage(docker, DEFAULT_STACK_IMAGE);
}
