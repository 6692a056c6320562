// The manual clock at scale (issue 37), the emulator as a separate process: with one idle app, a one-year advance
// used to block the whole process for 1.6-1.8 s and grow it by 140 MiB (every 10 s round of the year fired). Ten
// years in one call now answer at once, and the process's memory stays where it was.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatorProcess, spawnEmulator } from './emulator-process.ts';

const ADMIN = 'ad-reliability-clock-advance-0123456789';
const YEAR = 365 * 24 * 3600_000;
const MiB = 1024 * 1024;

describe('manual clock: long advances (emulator as a separate process)', () => {
  let dir: string;
  let emu: EmulatorProcess;
  const figures: string[] = [];

  const advance = async (ms: number) => {
    const res = await fetch(`${emu.api}/_emulator/clock/advance`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ms }),
    });
    return { status: res.status, body: (await res.json()) as { clock?: { now: string } } };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emu-clock-advance-'));
    emu = await spawnEmulator(dir, { adminToken: ADMIN, clock: 'manual', logLevel: 'error' });
    expect((await emu.call('POST', '/v1/apps', { body: { app: { name: 'idle-app' } } })).status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await emu?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (figures.length) console.log(`[reliability] clock advance: ${figures.join('; ')}`);
  });

  it('ten years in one call, then three more times: the clock moves, memory stays within idle + 20 MB', async () => {
    // Idle: after a first short advance and a few requests (what the first advance loads is part of idle).
    expect((await advance(60_000)).status).toBe(200);
    for (let i = 0; i < 5; i++) await emu.call('GET', '/v1/apps');
    const idle = emu.memory().rss;
    const before = Date.parse((await advance(1)).body.clock?.now ?? '');
    const took: number[] = [];
    for (let i = 0; i < 4; i++) {
      const t0 = performance.now();
      const res = await advance(10 * YEAR);
      took.push(performance.now() - t0);
      expect(res.status).toBe(200);
    }
    const after = Date.parse((await advance(1)).body.clock?.now ?? '');
    expect(after - before).toBe(40 * YEAR + 1);
    // The process still answers, and its app is there.
    expect((await emu.call('GET', '/_emulator/health', { as: null })).status).toBe(200);
    expect((await emu.call('GET', '/v1/apps/idle-app')).status).toBe(200);
    const rss = emu.memory().rss;
    figures.push(
      `4 × ten years: ${took.map((ms) => `${ms.toFixed(0)} ms`).join(', ')} per call (HTTP round trip); ` +
        `RSS idle ${(idle / MiB).toFixed(0)} MB → ${(rss / MiB).toFixed(0)} MB after`,
    );
    expect(rss).toBeLessThanOrEqual(idle + 20 * MiB);
  });
});
