// Which engine events a subscription delivers, and from when a resumed one asks for them.
// The engine stamps an event (timeNano) before it publishes it, under a lock, so two containers
// starting at once can be published out of time order: an event older than the newest one seen is
// not a replay by that alone. A resumed subscription asks for events since the newest seen minus a
// margin, and skips those it already delivered: the keys of the events within that margin are kept.

/** How far back a resumed subscription asks, and how long delivered events are remembered (ns). */
export const REPLAY_MARGIN_NS = 5_000_000_000;

export interface EventReplay {
  /** True when this event is new (deliver it); false when it was delivered already (a replay). */
  fresh(key: string, timeNano: number): boolean;
  /** Where a resumed subscription starts (ns), or 0 when nothing was seen yet. */
  resumeFromNs(): number;
}

export function createEventReplay(marginNs = REPLAY_MARGIN_NS): EventReplay {
  let newestNs = 0;
  // Insertion order is arrival order; entries older than the margin are dropped from the front.
  const seen = new Map<string, number>();
  return {
    fresh(key, timeNano) {
      const id = `${key}@${timeNano}`;
      if (seen.has(id) || (newestNs && timeNano < newestNs - marginNs)) return false;
      seen.set(id, timeNano);
      if (timeNano > newestNs) newestNs = timeNano;
      for (const [k, t] of seen) {
        if (t >= newestNs - marginNs) break;
        seen.delete(k);
      }
      return true;
    },
    resumeFromNs: () => (newestNs ? newestNs - marginNs : 0),
  };
}
