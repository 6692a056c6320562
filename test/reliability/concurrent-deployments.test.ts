// Deployments at once (issue #23, item 4), real Docker builds: 10 apps deployed together, and 5
// deployments of one app posted together. Every POST answers 201; the same app's deployments wait
// in line (`queued`), run one at a time and end in the order they were posted, the last one's image
// is what Docker runs; the emulator's memory stays ≤ 300 MB and no build directory is left.

import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { archiveOf, FAST } from '../support/apps.ts';
import { docker, removeInstance } from '../support/docker-cli.ts';
import { type EmulatorProcess, MB, mb, poll, spawnEmulator } from './emulator-process.ts';
import { createApp, postDeployment, waitForDeployment } from './support/deployments.ts';

const ACTIVE = ['building', 'pushing', 'starting'];

describe('deployments at once (emulator as a separate process, real Docker)', () => {
  it('10 apps and 5 deployments of one app: all end, the same app queues in order, memory ≤ 300 MB', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'emu-concurrent-'));
    const archive = await archiveOf('busybox-web');
    let emu: EmulatorProcess | undefined;
    let sampler: NodeJS.Timeout | undefined;
    let same = 'none';
    const figures: string[] = [];
    try {
      emu = await spawnEmulator(dataDir, { intervals: FAST, logLevel: 'error' });
      const e = emu;
      const idle = e.memory().rss;
      let sampled = 0;
      sampler = setInterval(() => (sampled = Math.max(sampled, e.memory().rss)), 100);
      const apps = await Promise.all(Array.from({ length: 10 }, () => createApp(e, 'many')));
      same = await createApp(e, 'same');
      const t0 = Date.now();
      // All 15 POSTs at once: every one is accepted (before, the same app's 2nd to 5th answered 409).
      const [many, sameIds] = await Promise.all([
        Promise.all(apps.map((app) => postDeployment(e, app, archive))),
        Promise.all(Array.from({ length: 5 }, () => postDeployment(e, same, archive))),
      ]);
      // While they run, the same app never has two deployments past `queued` and not ended.
      let maxActive = 0;
      let sawQueued = 0;
      let done = false;
      const watch = (async () => {
        while (!done) {
          const list = (await e.call('GET', `/v1/apps/${same}/deployments?per_page=10`)).body?.deployments ?? [];
          maxActive = Math.max(maxActive, list.filter((d: { status: string }) => ACTIVE.includes(d.status)).length);
          sawQueued = Math.max(sawQueued, list.filter((d: { status: string }) => d.status === 'queued').length);
          await new Promise((r) => setTimeout(r, 150));
        }
      })();
      const ended = await Promise.all([
        ...apps.map((app, i) => waitForDeployment(e, app, many[i], 240_000)),
        ...sameIds.map((id) => waitForDeployment(e, same, id, 240_000)),
      ]);
      done = true;
      await watch;
      const seconds = Math.round((Date.now() - t0) / 1000);
      for (const d of ended) expect(d.status, d.output).toBe('success');
      expect(maxActive).toBe(1);
      expect(sawQueued).toBeGreaterThanOrEqual(1);
      // Posted order = finishing order, and the app runs the last one (seen in Docker).
      const rows = (await e.call('GET', `/v1/apps/${same}/deployments?per_page=10`)).body.deployments as {
        id: string;
        finished_at: string;
      }[];
      const finished = sameIds.map((id) => Date.parse(rows.find((r) => r.id === id)?.finished_at ?? ''));
      expect(finished).toEqual([...finished].sort((a, b) => a - b));
      const running = await poll(
        async () => {
          const out = docker(
            'ps',
            '--filter',
            `label=${LABELS.appName}=${same}`,
            '--format',
            `{{.Label "${LABELS.deploymentId}"}}`,
          );
          return out && !out.includes('\n') ? out : null;
        },
        'one web container of the last deployment',
        30_000,
      );
      expect(running).toBe(sameIds[4]);
      const builds = join(dataDir, 'builds');
      await poll(
        async () => !existsSync(builds) || readdirSync(builds).length === 0,
        'the build directories to be removed',
        10_000,
      );
      const { peak } = e.memory();
      figures.push(
        `15 deployments (10 apps + 5 on one) in ${seconds} s, RSS idle ${mb(idle)}, peak sampled ${mb(sampled)}, VmHWM ${mb(peak)}`,
      );
      expect(peak).toBeLessThanOrEqual(300 * MB);
    } finally {
      if (sampler) clearInterval(sampler);
      // The instance id, from the labels of any container the emulator made (for the clean-up of its images).
      const instance = docker(
        'ps',
        '-a',
        '--filter',
        `label=${LABELS.appName}=${same}`,
        '--format',
        `{{.Label "${LABELS.instance}"}}`,
      ).split('\n')[0];
      await emu?.stop();
      if (instance) removeInstance(instance);
      rmSync(dataDir, { recursive: true, force: true });
      console.log(`[reliability] concurrent deployments: ${figures.join('; ')}`);
    }
  }, 360_000);
});
