import { describe, expect, it } from 'vitest';
import { createEventReplay } from '../../src/runtime/event-replay.ts';

const S = 1_000_000_000;

describe('engine events: which are delivered, from when a subscription resumes', () => {
  it('two events published out of time order are both delivered (containers started at once)', () => {
    const r = createEventReplay();
    expect(r.fresh('b/start', 100 * S + 2)).toBe(true);
    // Stamped before b's, published after it: not a replay.
    expect(r.fresh('a/start', 100 * S + 1)).toBe(true);
  });

  it('a resumed subscription starts a margin before the newest event and skips what was delivered', () => {
    const r = createEventReplay(5 * S);
    expect(r.resumeFromNs()).toBe(0);
    r.fresh('a/start', 100 * S);
    r.fresh('b/start', 103 * S);
    r.fresh('a/die', 104 * S);
    expect(r.resumeFromNs()).toBe(99 * S);
    // The engine replays from 99 s: what was delivered is skipped, what was not (c, missed meanwhile) is new.
    expect(r.fresh('a/start', 100 * S)).toBe(false);
    expect(r.fresh('b/start', 103 * S)).toBe(false);
    expect(r.fresh('c/start', 103.5 * S)).toBe(true);
    expect(r.fresh('a/die', 104 * S)).toBe(false);
    expect(r.fresh('b/die', 104 * S)).toBe(true);
  });

  it('the same action of the same container at another time is another event', () => {
    const r = createEventReplay();
    expect(r.fresh('a/start', 10 * S)).toBe(true);
    expect(r.fresh('a/start', 11 * S)).toBe(true);
    expect(r.fresh('a/start', 11 * S)).toBe(false);
  });

  it('what it remembers stays within the margin: an event older than the margin is taken as a replay', () => {
    const r = createEventReplay(5 * S);
    for (let i = 0; i < 1000; i++) expect(r.fresh(`c${i}/start`, i * S)).toBe(true);
    expect(r.fresh('late/start', 990 * S)).toBe(false);
    expect(r.fresh('c999/start', 999 * S)).toBe(false);
    expect(r.fresh('c995/start', 995 * S)).toBe(false);
    expect(r.fresh('new/start', 995 * S)).toBe(true);
  });
});
