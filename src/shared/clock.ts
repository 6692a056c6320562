// Injectable time source: services never call Date.now() directly, so tests (and a virtual
// clock) can move time — token expiry, operation durations, alert windows.
//
// Timers that stand for platform time (crash back-off, the stats/alert rounds, logs rotation, the
// one-off idle limit…) are scheduled through the clock too, so a manual clock moves them: advancing
// it fires every timer that falls due, in order, as if the time had passed. Pure I/O timeouts
// (sockets, engine calls, WebSocket pings, retries of network deliveries) stay on real time.

/** What a clock's setTimeout/setInterval return: `unref()` like Node's timers (a no-op on a manual clock). */
export interface ClockTimer {
  unref(): unknown;
}

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): ClockTimer;
  setInterval(fn: () => void, ms: number): ClockTimer;
  /** Cancels a timer of either kind (undefined/null accepted). */
  clearTimeout(timer: ClockTimer | null | undefined): void;
  clearInterval(timer: ClockTimer | null | undefined): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearTimeout: (t) => clearTimeout(t as NodeJS.Timeout | undefined),
  clearInterval: (t) => clearInterval(t as NodeJS.Timeout | undefined),
};

interface ManualTimer extends ClockTimer {
  due: number;
  seq: number;
  every: number | null;
  fn: () => void;
  cancelled: boolean;
}

// Firings one advance() may run: a timer that keeps re-arming itself at 0 ms cannot hang the process.
const MAX_FIRINGS_PER_ADVANCE = 1_000_000;
// Firings of one periodic timer in one advance (the last at its last due time): minutes of 10 s rounds fire each.
const MAX_PERIODIC_FIRINGS = 100;

/** A clock that only moves when told to: advance(ms) fires the timers that fall due, in due order. */
export class ManualClock implements Clock {
  private timers = new Set<ManualTimer>();
  private seq = 0;
  /** Errors thrown by timer callbacks go here (default: ignored, as a timer's error would be unhandled anyway). */
  onTimerError: (err: unknown) => void = () => undefined;

  constructor(private current = Date.now()) {}

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    return this.add(fn, ms, null);
  }

  setInterval(fn: () => void, ms: number): ClockTimer {
    return this.add(fn, ms, Math.max(1, ms));
  }

  clearTimeout(timer: ClockTimer | null | undefined): void {
    const t = timer as ManualTimer | null | undefined;
    if (t && this.timers.delete(t)) t.cancelled = true;
  }

  clearInterval(timer: ClockTimer | null | undefined): void {
    this.clearTimeout(timer);
  }

  /** Timers waiting for the clock to move (tests, the control plane's clock view). */
  pending(): number {
    return this.timers.size;
  }

  /**
   * Moves time forward by `ms`, firing each timer due on the way at its own due time (now() returns
   * that time inside the callback). Timers armed by callbacks fire too when they fall due before the end.
   */
  advance(ms: number): void {
    const target = this.current + Math.max(0, ms);
    const firings = new Map<ManualTimer, number>();
    for (let fired = 0; fired < MAX_FIRINGS_PER_ADVANCE; fired++) {
      let next: ManualTimer | undefined;
      for (const t of this.timers)
        if (t.due <= target && (!next || t.due < next.due || (t.due === next.due && t.seq < next.seq))) next = t;
      if (!next) break;
      if (next.due > this.current) this.current = next.due;
      if (next.every !== null) {
        next.due += next.every;
        // A periodic timer due more than MAX_PERIODIC_FIRINGS times within one advance then skips to its last due
        // time: its work reads now() (rotation and retention by age, expiries, alert durations between rounds), so
        // the firings skipped would cost without changing the outcome. A year of 10 s rounds was 3 million firings,
        // seconds of a blocked process (issue 37): an advance now costs the same whatever its span.
        const count = (firings.get(next) ?? 0) + 1;
        firings.set(next, count);
        if (count === MAX_PERIODIC_FIRINGS - 1 && next.due + next.every <= target)
          next.due += Math.floor((target - next.due) / next.every) * next.every;
        next.seq = this.seq++;
      } else {
        this.timers.delete(next);
      }
      try {
        next.fn();
      } catch (err) {
        this.onTimerError(err);
      }
    }
    this.current = target;
  }

  private add(fn: () => void, ms: number, every: number | null): ClockTimer {
    const t: ManualTimer = {
      due: this.current + Math.max(0, Number.isFinite(ms) ? ms : 0),
      seq: this.seq++,
      every,
      fn,
      cancelled: false,
      unref: () => t,
    };
    this.timers.add(t);
    return t;
  }
}

/** ISO 8601 with milliseconds and a zone designator, as the platform writes dates. */
export function isoDate(ms: number): string;
export function isoDate(ms: number | null | undefined): string | null;
export function isoDate(ms: number | null | undefined): string | null {
  return ms == null ? null : new Date(ms).toISOString();
}
