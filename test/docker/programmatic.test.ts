import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { type StartedEmulator, startEmulator } from '../../src/index.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { copyFixture, FAST, routerGet } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// The programmatic API with real containers: what it starts, `stop()` removes (in memory nothing
// could find them again), and two instances side by side keep to their own.
const started: StartedEmulator[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const e of started) {
    await e.stop();
    removeInstance(e.emulator.instanceId);
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function withApp(name: string) {
  const dir = copyFixture('busybox-web');
  dirs.push(dir);
  const emu = await startEmulator({ config: { intervals: FAST, apps: [{ name, dir }] } });
  started.push(emu);
  const containers = () => dockerPs([`${LABELS.instance}=${emu.emulator.instanceId}`, `${LABELS.appName}=${name}`]);
  await eventually(() => containers().length === 1, { timeoutMs: 60_000, what: `${name}'s web container` });
  return { emu, containers };
}

describe('startEmulator() with Docker', () => {
  it('runs two instances side by side, each with its own containers, and stop() removes them and their images', async () => {
    const a = await withApp('prog-one');
    const b = await withApp('prog-two');
    expect(a.emu.emulator.instanceId).not.toBe(b.emu.emulator.instanceId);
    expect(new Set([a.emu.apiUrl, b.emu.apiUrl, a.emu.routerUrl, b.emu.routerUrl]).size).toBe(4);
    // Each instance's app answers through its own router.
    const page = await eventually(async () => {
      const r = await routerGet(a.emu.routerPort, 'prog-one');
      return r.status === 200 ? r.body : null;
    });
    expect(page).toContain('from web-1');
    const images = () => docker('images', '-q', '--filter', `label=${LABELS.instance}=${a.emu.emulator.instanceId}`);
    expect(images()).not.toBe('');
    await a.emu.stop();
    expect(dockerPs([`${LABELS.instance}=${a.emu.emulator.instanceId}`], true)).toEqual([]);
    expect(images()).toBe('');
    // The other instance is untouched.
    expect(b.containers().map((c) => c.state)).toEqual(['running']);
    await a.emu.stop(); // a second stop is harmless
  });
});
