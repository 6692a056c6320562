import Docker from 'dockerode';
import { ensureBusyboxImage } from '../src/runtime/images.ts';
import { DEFAULT_STACK_IMAGE } from '../src/config/schema.ts';

// Builds the base image once for the whole run (offline: scratch + static busybox). Docker-backed
// tests need an engine: scripts/docker-up.sh provides one; in CI its absence fails the run.
export default async function setup(): Promise<void> {
  const docker = new Docker();
  try {
    await docker.ping();
  } catch (err) {
    const msg = `no Docker engine answers (${(err as Error).message}): run scripts/docker-up.sh`;
    if (process.env.CI) throw new Error(msg);
    console.warn(`[global-setup] ${msg}; Docker-backed tests will fail`);
    return;
  }
  await ensureBusyboxImage(docker, DEFAULT_STACK_IMAGE);
}
