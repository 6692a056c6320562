import { describe, it, expect, afterEach } from 'vitest';
import { ManualClock } from '../../src/shared/clock.ts';
import { startEmulator, type Harness } from '../harness.ts';

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
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    h = await startEmulator({ rateLimit: { enabled: true, perMinute: 60 } }, { clock });
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
});
