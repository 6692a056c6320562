import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.ts';
import { type Harness, startEmulator } from '../harness.ts';

describe('rate limit', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('is off by default', async () => {
    h = await startEmulator();
    for (let i = 0; i < 70; i++) expect((await h.call('GET', '/v1/apps')).status).toBe(200);
  });

  it('when on: 429 in plain text with Retry-After past the limit, per token, reset after the minute', async () => {
    // The windows run on real time (the wall clock), here a manual one the test moves.
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    h = await startEmulator({ rateLimit: { enabled: true, perMinute: 60 } }, { wallClock: clock });
    for (let i = 0; i < 60; i++) expect((await h.call('GET', '/v1/apps')).status).toBe(200);
    clock.advance(15_000);
    const limited = await h.call('GET', '/v1/apps');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(limited.text).toMatch(/retry later/i);
    expect(limited.headers.get('retry-after')).toBe('45');
    // Another token has its own budget.
    expect((await h.call('GET', '/v1/apps', { as: 'other' })).status).toBe(200);
    clock.advance(46_000);
    expect((await h.call('GET', '/v1/apps')).status).toBe(200);
  });

  it('under the manual clock, the windows (API and wrong admin tokens) follow real time, not platform time', async () => {
    const ADMIN = 'admin-token-for-rate-limit-0000000';
    const wall = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    h = await startEmulator(
      { clock: 'manual', adminToken: ADMIN, rateLimit: { enabled: true, perMinute: 60 } },
      { wallClock: wall },
    );
    const advance = (ms: number) =>
      h!.call('POST', '/_emulator/clock/advance', { body: { ms }, as: { bearer: ADMIN } });
    const wrongAdmin = () => h!.call('GET', '/_emulator/faults', { as: { bearer: 'not-the-admin-token-000000000' } });
    for (let i = 0; i < 60; i++) expect((await h.call('GET', '/v1/apps')).status).toBe(200);
    for (let i = 0; i < 60; i++) expect((await wrongAdmin()).status).toBe(401);
    expect((await h.call('GET', '/v1/apps')).status).toBe(429);
    expect((await wrongAdmin()).status).toBe(429);
    // A day of platform time: the windows are not over (no real time passed).
    expect((await advance(24 * 3600_000)).status).toBe(200);
    expect((await h.call('GET', '/v1/apps')).status).toBe(429);
    expect((await wrongAdmin()).status).toBe(429);
    // A minute of real time: both are over, whatever the platform clock says.
    wall.advance(61_000);
    expect((await h.call('GET', '/v1/apps')).status).toBe(200);
    expect((await wrongAdmin()).status).toBe(401);
  });
});
