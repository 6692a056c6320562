// Injectable time source: services never call Date.now() directly, so tests (and a virtual
// clock) can move time — token expiry, operation durations, alert windows.
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export class ManualClock implements Clock {
  constructor(private current = Date.now()) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/** ISO 8601 with milliseconds and a zone designator, as the platform writes dates. */
export function isoDate(ms: number | null | undefined): string | null {
  return ms == null ? null : new Date(ms).toISOString();
}
