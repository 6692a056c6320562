// Whether the container engine answers, as one runtime sees it. Every call and stream of the
// runtime reports here (an answer: up; an unreachable socket: down); while down, the engine is
// pinged every `retryMs` so its return is noticed without anyone asking. Consumers (log
// collection, events, the API's 503s) subscribe to the transitions instead of guessing.
import { type EngineState, isEngineUnreachable } from './runtime.ts';

export interface EngineStateOptions {
  /** Resolves when the engine answers; rejects otherwise (within its own timeout). */
  ping: () => Promise<void>;
  retryMs?: number;
  /** An 'up' confirmed this recently is trusted without a new ping. */
  freshMs?: number;
}

export function createEngineState(opts: EngineStateOptions) {
  const retryMs = opts.retryMs ?? 1000;
  const freshMs = opts.freshMs ?? 1000;
  let state: EngineState | 'unknown' = 'unknown';
  let lastOk = 0;
  let timer: NodeJS.Timeout | null = null;
  let pinging: Promise<boolean> | null = null;
  let closed = false;
  const listeners = new Set<(s: EngineState) => void>();

  function set(next: EngineState): void {
    if (next === 'up') lastOk = Date.now();
    if (state === next) return;
    state = next;
    if (next === 'down') retryLater();
    for (const l of listeners) {
      try {
        l(next);
      } catch {
        // a listener's failure is its own
      }
    }
  }

  function retryLater(): void {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = null;
      if (closed || state !== 'down') return;
      void ping().then((up) => {
        if (!up) retryLater();
      });
    }, retryMs);
    timer.unref();
  }

  function ping(): Promise<boolean> {
    pinging ??= opts
      .ping()
      .then(
        () => {
          set('up');
          return true;
        },
        () => {
          set('down');
          return false;
        },
      )
      .finally(() => {
        pinging = null;
      });
    return pinging;
  }

  return {
    get state() {
      return state;
    },
    /** A call answered. */
    noteOk: () => set('up'),
    /** A call failed: down when the failure says the engine is unreachable. */
    noteError(err: unknown): void {
      if (isEngineUnreachable(err)) set('down');
    },
    /** A stream was cut: ask the engine now (a restart of the engine cuts every stream). */
    suspect: () => void ping(),
    ping,
    available(): Promise<boolean> {
      if (state === 'up' && Date.now() - lastOk < freshMs) return Promise.resolve(true);
      return ping();
    },
    onChange(listener: (s: EngineState) => void): () => void {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    close(): void {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = null;
      listeners.clear();
    },
  };
}

export type EngineStateTracker = ReturnType<typeof createEngineState>;
