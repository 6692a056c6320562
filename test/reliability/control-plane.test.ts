// The control plane under hostile use and during traffic (issue #23, item 6), the emulator as a
// separate process: a wrong admin token is refused whatever it shares with the right one (compared
// as hashes: its timings are printed, not asserted), and wrong tokens are rate-limited like the API
// (429 plain text with Retry-After past 60 a minute) while the right token still passes. `reset` and
// a snapshot `restore` made while users write lose no write acknowledged after them, and no answer
// is a 500.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatorProcess, spawnEmulator } from './emulator-process.ts';

const ADMIN = 'ad-reliability-admin-token-0123456789abcdef';

describe('control plane: wrong admin tokens, reset and restore during traffic (emulator as a separate process)', () => {
  let dir: string;
  let emu: EmulatorProcess;
  const figures: string[] = [];

  const admin = async (method: string, path: string, token = ADMIN) => {
    const res = await fetch(`${emu.api}/_emulator${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: method === 'POST' ? '{}' : undefined,
    });
    return { status: res.status, text: await res.text(), retryAfter: res.headers.get('retry-after') };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emu-control-'));
    emu = await spawnEmulator(dir, { adminToken: ADMIN, logLevel: 'error' });
  }, 60_000);

  afterAll(async () => {
    await emu?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    console.log(`[reliability] control plane: ${figures.join('; ')}`);
  });

  it('wrong admin tokens: 401 whatever they share with the right one, then 429 past 60 a minute; the right token passes', async () => {
    // Timings of tokens sharing nothing, all but the last character, or of another length (printed only).
    const wrong = {
      none: `zz${'0'.repeat(ADMIN.length - 2)}`,
      'all but last': `${ADMIN.slice(0, -1)}x`,
      longer: `${ADMIN}${'0'.repeat(200)}`,
    };
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const timings: string[] = [];
    for (const [name, token] of Object.entries(wrong)) {
      const times: number[] = [];
      for (let i = 0; i < 15; i++) {
        const t0 = performance.now();
        const r = await admin('GET', '/faults', token);
        times.push(performance.now() - t0);
        expect(r.status).toBe(401);
        expect(JSON.parse(r.text)).toEqual({ error: 'invalid admin token' });
      }
      timings.push(`${name} ${median(times).toFixed(2)} ms`);
    }
    figures.push(`wrong admin token, median answer: ${timings.join(', ')}`);
    // 45 failures so far: 15 more reach the API's 60 a minute, the next ones are 429.
    const more = await Promise.all(Array.from({ length: 15 }, (_, i) => admin('GET', '/faults', `ad-guess-${i}`)));
    expect(more.map((r) => r.status)).toEqual(Array(15).fill(401));
    const limited = await admin('GET', '/faults', 'ad-guess-61');
    expect(limited.status).toBe(429);
    expect(limited.text).toMatch(/^Too many requests/);
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
    // The owner is not locked out by guesses.
    expect((await admin('GET', '/faults')).status).toBe(200);
    figures.push(
      `wrong admin tokens: 60 answered 401, the 61st 429 (Retry-After ${limited.retryAfter} s), the right token 200`,
    );
  });

  /** Users writing without pause until stopped: every answer, and when it came relative to `mark`. */
  function traffic() {
    const acks: { app: string; startedAt: number; ackedAt: number }[] = [];
    const statuses: number[] = [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const app = `traffic-${randomBytes(4).toString('hex')}`;
        const startedAt = performance.now();
        const r = await emu.call('POST', '/v1/apps', { body: { app: { name: app } } }).catch(() => ({ status: 0 }));
        statuses.push(r.status);
        if (r.status === 201) acks.push({ app, startedAt, ackedAt: performance.now() });
      }
    };
    const workers = Promise.all(Array.from({ length: 4 }, worker));
    return {
      acks,
      statuses,
      async end() {
        stop = true;
        await workers;
      },
    };
  }

  async function appNames(): Promise<Set<string>> {
    const names = new Set<string>();
    for (let page = 1; ; page++) {
      const r = await emu.call('GET', `/v1/apps?per_page=100&page=${page}`);
      for (const a of r.body.apps as { name: string }[]) names.add(a.name);
      if (!r.body.meta?.pagination?.next_page) return names;
    }
  }

  it('reset and restore during traffic: every write acknowledged after them is kept, no 500', async () => {
    const t = traffic();
    await new Promise((ok) => setTimeout(ok, 500));
    const snap = JSON.parse((await admin('POST', '/snapshots')).text).snapshot.id as string;
    await new Promise((ok) => setTimeout(ok, 500));
    const reset = await admin('POST', '/reset');
    const afterReset = performance.now();
    expect(reset.status).toBe(204);
    await new Promise((ok) => setTimeout(ok, 500));
    // Every write acknowledged after the reset is there (before the restore replaces the state).
    const listedAt = performance.now();
    const afterResetNames = await appNames();
    const sinceReset = t.acks.filter((a) => a.startedAt > afterReset && a.ackedAt < listedAt);
    expect(sinceReset.length).toBeGreaterThan(0);
    expect(sinceReset.filter((a) => !afterResetNames.has(a.app))).toEqual([]);
    const restored = await admin('POST', `/snapshots/${snap}/restore`);
    const afterRestore = performance.now();
    expect(restored.status).toBe(204);
    await new Promise((ok) => setTimeout(ok, 500));
    await t.end();
    const names = await appNames();
    const later = t.acks.filter((a) => a.startedAt > afterRestore);
    const lost = later.filter((a) => !names.has(a.app));
    figures.push(
      `reset and restore during traffic: ${t.statuses.length} writes (${[...new Set(t.statuses)].sort().join('/')}), ${later.length} acknowledged after the restore, all kept; ${sinceReset.length} acknowledged after the reset, all there before the restore`,
    );
    expect(t.statuses.filter((s) => s >= 500 || s === 0)).toEqual([]);
    expect(later.length).toBeGreaterThan(0);
    expect(lost).toEqual([]);
  }, 60_000);
});
