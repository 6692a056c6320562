// The runtime as the emulator sees it while workload faults are active: the composition root wraps
// the real runtime once, so no area has to know about faults.
// - docker_unavailable: every engine call fails as if the socket refused connections (the areas'
//   usual handling applies: container endpoints answer 503, the health probe says unavailable);
// - log_delay: container output reaches the logs pipeline (history, streams, drains) late.

import { AsyncQueue } from '../../runtime/async-queue.ts';
import { type ContainerRuntime, EngineUnavailableError, LABELS, type LogLine } from '../../runtime/runtime.ts';
import { type Faults } from './faults.ts';

/** The runtime's own typed error for an unreachable engine: the same path as a stopped engine. */
export function engineDownError(): Error {
  return new EngineUnavailableError(
    Object.assign(new Error('connect ECONNREFUSED (docker_unavailable fault)'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
    }),
  );
}

// Methods that never reach the engine, or must keep working to tear down.
const PASS_THROUGH = new Set<keyof ContainerRuntime>(['onEvent', 'close']);

export function withFaults(runtime: ContainerRuntime, faults: Faults): ContainerRuntime {
  const logs: ContainerRuntime['logs'] = async (engineId, opts) => {
    if (faults.engineDown()) throw engineDownError();
    const source = await runtime.logs(engineId, opts);
    return delayed(source, faults, async () => (await runtime.inspect(engineId).catch(() => null))?.labels ?? {});
  };
  // Listeners hear the real engine's transitions and those of docker_unavailable faults.
  const onEngine: ContainerRuntime['onEngine'] = (listener) => {
    const offReal = runtime.onEngine(listener);
    const offFault = faults.onEngineChange(listener);
    return () => {
      offReal();
      offFault();
    };
  };
  const available: ContainerRuntime['available'] = () =>
    faults.engineDown() ? Promise.resolve(false) : runtime.available();
  const cache = new Map<PropertyKey, unknown>();
  // A proxy, so runtimes written as classes (tests' fakes) and extra members pass through unchanged.
  return new Proxy(runtime, {
    get(target, key, receiver) {
      if (key === 'logs') return logs;
      if (key === 'onEngine') return onEngine;
      if (key === 'available') return available;
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      let fn = cache.get(key);
      if (!fn) {
        const original = value as (...args: unknown[]) => unknown;
        fn = PASS_THROUGH.has(key as keyof ContainerRuntime)
          ? original.bind(target)
          : (...args: unknown[]) => {
              if (!faults.engineDown()) return original.apply(target, args);
              if (key === 'probe') return Promise.resolve({ ok: false, error: engineDownError().message });
              return Promise.reject(engineDownError());
            };
        cache.set(key, fn);
      }
      return fn;
    },
  });
}

/**
 * Holds each line until `log_delay_ms` after it arrived (order kept). The delay is wall-clock time: it
 * stands for a slow log transport, not for platform time. Until a delay fault first exists the
 * lines pass straight through; from then on a reader takes them as they come (bounded: it pauses
 * when 1000 wait, so the collector's back-pressure still reaches Docker) and stamps their arrival.
 */
function delayed(
  source: AsyncIterable<LogLine> & { close(): void; takeWaiting?(): LogLine[] },
  faults: Faults,
  labelsOf: () => Promise<Record<string, string>>,
): AsyncIterable<LogLine> & { close(): void; takeWaiting(): LogLine[] } {
  let slow: AsyncIterator<LogLine> | null = null;
  return {
    close: () => source.close(),
    // Lines waiting pass straight on, but only while no delay fault exists (they would skip the delay).
    takeWaiting: () => (slow || faults.hasLogDelay() ? [] : (source.takeWaiting?.() ?? [])),
    // Without a delay fault a line costs one `then` here, not an async generator's round trips.
    [Symbol.asyncIterator]() {
      const it = source[Symbol.asyncIterator]();
      return {
        next: () =>
          slow
            ? slow.next()
            : it.next().then((r) => {
                // A fault added while this line was awaited applies to it already.
                if (r.done || !faults.hasLogDelay()) return r;
                slow = delayedFrom(it, { line: r.value, at: Date.now() }, faults, labelsOf);
                return slow.next();
              }),
        // Like a generator's return: the source is left to close(), as before.
        return: () =>
          slow?.return ? slow.return(undefined) : Promise.resolve({ value: undefined, done: true as const }),
      };
    },
  };
}

/** From the first delayed line on: the reader that stamps arrivals and holds each line its delay. */
async function* delayedFrom(
  it: AsyncIterator<LogLine>,
  first: { line: LogLine; at: number },
  faults: Faults,
  labelsOf: () => Promise<Record<string, string>>,
): AsyncGenerator<LogLine> {
  let resume: (() => void) | null = null;
  let paused = false;
  let failure: unknown;
  const queue = new AsyncQueue<{ line: LogLine; at: number }>({
    highWater: 1000,
    onPressure: (p) => {
      paused = p;
      if (!p) resume?.();
    },
  });
  queue.push(first);
  void (async () => {
    try {
      for (;;) {
        while (paused) await new Promise<void>((r) => (resume = r));
        const r = await it.next();
        if (r.done) break;
        queue.push({ line: r.value, at: Date.now() });
      }
    } catch (err) {
      failure = err;
    } finally {
      queue.end();
    }
  })();
  const labels = labelsOf();
  for await (const { line, at } of queue) {
    if (faults.hasLogDelay()) {
      const l = await labels;
      const wait = at + faults.logDelayMs(l[LABELS.appId], l[LABELS.appName]) - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    yield line;
  }
  if (failure) throw failure;
}
