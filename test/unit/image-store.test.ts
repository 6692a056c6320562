import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { usesContainerdStore } from '../../src/runtime/docker-images.ts';

// Where the engine's image store is containerd's, layerImage leaves the Node.js image to the commit path:
// told by `docker info`'s DriverStatus (what Docker Engine 24+ prints with the containerd snapshotter on).
const engine = (status: unknown): Pick<Docker, 'info'> => ({ info: async () => ({ DriverStatus: status }) });

describe('usesContainerdStore', () => {
  it('the containerd snapshotter: yes; overlay2 (classic store), none said: no', async () => {
    expect(await usesContainerdStore(engine([['driver-type', 'io.containerd.snapshotter.v1']]))).toBe(true);
    expect(
      await usesContainerdStore(
        engine([
          ['Backing Filesystem', 'extfs'],
          ['Supports d_type', 'true'],
        ]),
      ),
    ).toBe(false);
    expect(await usesContainerdStore(engine(null))).toBe(false);
  });
});
