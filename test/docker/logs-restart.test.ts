import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FAST, waitForStatus } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';
import { logsUrl, messageOf, readLogs } from '../support/logs.ts';

// The emulator restarted while a container prints: no line lost, none twice (counted against
// Docker's own record of the container's output).
describe('logs across an emulator restart (real Docker)', () => {
  it('loses and duplicates no line of a container printing throughout', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'emu-logs-restart-'));
    const dir = mkdtempSync(join(tmpdir(), 'emu-logs-restart-app-'));
    // A web process that answers (so it boots) and prints a numbered line every 20 ms.
    writeFileSync(
      join(dir, 'Procfile'),
      'web: mkdir -p /tmp/www && echo ok > /tmp/www/index.html && httpd -p $PORT -h /tmp/www && i=0 && while true; do i=$((i+1)); echo tick-$i; sleep 0.02; done\n',
    );
    const cfg = { inMemory: false, dataDir, intervals: FAST, apps: [{ name: 'logs-restart-app', dir }] };
    let first: Harness | undefined = await startEmulator(cfg);
    const instance = first.emu.instanceId;
    let second: Harness | undefined;
    const history = async (h: Harness) =>
      (await readLogs(await logsUrl(h, 'logs-restart-app'), { n: 10_000, filter: 'web' })).lines.map(messageOf);
    try {
      await waitForStatus(first, 'logs-restart-app', 'running');
      const [web] = dockerPs([
        `${LABELS.instance}=${instance}`,
        `${LABELS.appName}=logs-restart-app`,
        `${LABELS.type}=web`,
      ]);
      await eventually(async () => (await history(first!)).length >= 30, { what: 'lines before the restart' });
      await first.stop();
      first = undefined;
      // Down for a while: the container keeps printing, Docker keeps the lines.
      const printedWhileDown = docker('logs', web.id).split('\n').filter(Boolean).length;
      await eventually(() => docker('logs', web.id).split('\n').filter(Boolean).length >= printedWhileDown + 30, {
        what: 'lines printed while down',
      });
      second = await startEmulator(cfg);
      expect(second.emu.instanceId).toBe(instance);
      // The same container goes on (reconciled, not recreated).
      expect(dockerPs([`${LABELS.instance}=${instance}`, `${LABELS.type}=web`]).map((c) => c.id)).toEqual([web.id]);
      const recorded = docker('logs', web.id).split('\n').filter(Boolean);
      const got = await eventually(
        async () => {
          const lines = await history(second!);
          return lines.length >= recorded.length ? lines : null;
        },
        { what: 'the emulator to catch up with docker logs' },
      );
      // Docker's record is a prefix of ours: same lines, same order, nothing missing or doubled.
      expect(got.slice(0, recorded.length)).toEqual(recorded);
      const numbers = got.map((l) => Number(l.split('-')[1]));
      expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));
    } finally {
      await first?.stop();
      await second?.stop();
      removeInstance(instance);
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
