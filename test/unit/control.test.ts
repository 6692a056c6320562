import { describe, expect, it } from 'vitest';
import { compilePathPattern, createFaults } from '../../src/modules/control/faults.ts';
import { ManualClock } from '../../src/shared/clock.ts';

describe('ManualClock timers', () => {
  it('advance fires due timers in due order, each seeing its own due time; later ones wait', () => {
    const clock = new ManualClock(1_000);
    const seen: string[] = [];
    clock.setTimeout(() => seen.push(`b@${clock.now()}`), 200);
    clock.setTimeout(() => seen.push(`a@${clock.now()}`), 100);
    clock.setTimeout(() => seen.push(`c@${clock.now()}`), 5_000);
    clock.advance(300);
    expect(seen).toEqual(['a@1100', 'b@1200']);
    expect(clock.now()).toBe(1_300);
    clock.advance(10_000);
    expect(seen).toEqual(['a@1100', 'b@1200', 'c@6000']);
    expect(clock.pending()).toBe(0);
  });

  it('intervals fire once per period crossed; cleared timers never fire; timers armed by callbacks fire when due', () => {
    const clock = new ManualClock(0);
    const ticks: number[] = [];
    const t = clock.setInterval(() => ticks.push(clock.now()), 60_000);
    const never = clock.setTimeout(() => ticks.push(-1), 10);
    clock.clearTimeout(never);
    clock.setTimeout(() => clock.setTimeout(() => ticks.push(clock.now() + 0.5), 20_000), 30_000);
    clock.advance(180_000);
    expect(ticks).toEqual([50_000.5, 60_000, 120_000, 180_000]);
    clock.clearInterval(t);
    clock.advance(600_000);
    expect(ticks).toHaveLength(4);
  });

  it('a long advance: a periodic timer fires 100 times at most, the last at its last due time; timeouts at theirs', () => {
    const clock = new ManualClock(0);
    const ticks: number[] = [];
    const seen: string[] = [];
    clock.setInterval(() => ticks.push(clock.now()), 10_000);
    clock.setTimeout(() => seen.push(`half@${clock.now()}`), 5_000_000_005);
    const TEN_YEARS = 10 * 365 * 24 * 3600_000;
    clock.advance(TEN_YEARS);
    expect(ticks).toHaveLength(100);
    expect(ticks.slice(0, 3)).toEqual([10_000, 20_000, 30_000]);
    expect(ticks[98]).toBe(990_000);
    expect(ticks[99]).toBe(TEN_YEARS); // the last due time (a multiple of the period)
    expect(seen).toEqual(['half@5000000005']);
    expect(clock.now()).toBe(TEN_YEARS);
    // The next advance goes on from there, one period at a time.
    clock.advance(20_000);
    expect(ticks.slice(100)).toEqual([TEN_YEARS + 10_000, TEN_YEARS + 20_000]);
  });

  it('a callback that throws does not stop the others', () => {
    const clock = new ManualClock(0);
    const errors: unknown[] = [];
    clock.onTimerError = (e) => errors.push(e);
    let ran = false;
    clock.setTimeout(() => {
      throw new Error('boom');
    }, 1);
    clock.setTimeout(() => (ran = true), 2);
    clock.advance(5);
    expect(ran).toBe(true);
    expect(errors).toHaveLength(1);
  });
});

describe('fault path patterns', () => {
  it('* is within one segment, ** across segments, ? one character; everything else literal', () => {
    const m = (glob: string, path: string) => compilePathPattern(glob).matches(path);
    expect(m('/v1/apps/*/scale', '/v1/apps/my-app/scale')).toBe(true);
    expect(m('/v1/apps/*/scale', '/v1/apps/a/b/scale')).toBe(false);
    expect(m('/v1/apps/*', '/v1/apps')).toBe(false);
    expect(m('/v1/**', '/v1/apps/a/b/scale')).toBe(true);
    expect(m('/v1/apps/app-?', '/v1/apps/app-1')).toBe(true);
    expect(m('/v1/apps/app-?', '/v1/apps/app-12')).toBe(false);
    expect(m('/v1/apps/a.b', '/v1/apps/aXb')).toBe(false); // regex characters are literal
    expect(m('/v1/(a+)+$', '/v1/(a+)+$')).toBe(true);
    // A pattern that would backtrack exponentially in a backtracking engine answers at once (RE2 is linear).
    expect(m('/**a**a**a**a**a**a**b', `/${'a'.repeat(5000)}`)).toBe(false);
  });

  it('faults: count runs out, a seeded probability repeats, docker_unavailable ends on the clock', () => {
    const clock = new ManualClock(0);
    const faults = createFaults({ clock });
    faults.add({ type: 'api', method: 'GET', path: '/x', status: 500, count: 2 });
    expect([1, 2, 3].map(() => faults.matchApi('GET', '/x')?.status ?? null)).toEqual([500, 500, null]);
    const draw = () => {
      faults.clear();
      faults.add({ type: 'api', method: '*', path: '/y', status: 503, probability: 0.3, seed: 7 });
      return Array.from({ length: 30 }, () => (faults.matchApi('POST', '/y') ? 1 : 0)).join('');
    };
    const first = draw();
    expect(first).toMatch(/1/);
    expect(first).toMatch(/0/);
    expect(draw()).toBe(first);
    faults.add({ type: 'docker_unavailable', seconds: 10 });
    expect(faults.engineDown()).toBe(true);
    clock.advance(9_999);
    expect(faults.engineDown()).toBe(true);
    clock.advance(1);
    expect(faults.engineDown()).toBe(false);
    expect(faults.list().some((f) => f.spec.type === 'docker_unavailable')).toBe(false);
  });
});
