// The runtime as the areas see it while the emulator stops: once `close()` is called, nothing new
// starts on the engine (containers, networks, images), so that a stop wins over the work in flight
// (provisioning, builds, hooks, a watcher's redeploy): each meets a refusal at its next step and
// ends. Teardown calls (stop, kill, remove, list, inspect, wait…) pass as before.
import { type ContainerRuntime } from './runtime.ts';

/** What creates something on the engine. */
const GATED = new Set<keyof ContainerRuntime>([
  'run',
  'start',
  'buildImage',
  'ensureNetwork',
  'ensureBaseImage',
  'importImage',
  'pullImage',
  'commit',
  'layerImage',
]);
// Quick calls a stop waits for, so that a listing made after it sees what they created; image builds
// and imports are not waited for (they create no container, and can take minutes).
const AWAITED = new Set<keyof ContainerRuntime>(['run', 'start', 'ensureNetwork']);
const AWAIT_MS = 10_000;

export class EmulatorStoppingError extends Error {
  constructor(what: string) {
    super(`the emulator is stopping: ${what} refused`);
  }
}

export interface ShutdownGate {
  runtime: ContainerRuntime;
  /** From now on, creations are refused; resolves once those in flight returned (bounded). */
  close(): Promise<void>;
  readonly closed: boolean;
  /** Aborted at close(): work the engine does not see (the host's package downloads) ends with it. */
  readonly signal: AbortSignal;
}

export function withShutdownGate(runtime: ContainerRuntime): ShutdownGate {
  let closed = false;
  const stopping = new AbortController();
  const inFlight = new Set<Promise<unknown>>();
  const cache = new Map<PropertyKey, unknown>();
  const gated = new Proxy(runtime, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function' || !GATED.has(key as keyof ContainerRuntime)) return value;
      let fn = cache.get(key);
      if (!fn) {
        const original = value as (...args: unknown[]) => Promise<unknown>;
        fn = (...args: unknown[]) => {
          if (closed) return Promise.reject(new EmulatorStoppingError(String(key)));
          const call = original.apply(target, args);
          if (!AWAITED.has(key as keyof ContainerRuntime)) return call;
          const settled = call.then(
            () => undefined,
            () => undefined,
          );
          inFlight.add(settled);
          void settled.then(() => inFlight.delete(settled));
          return call;
        };
        cache.set(key, fn);
      }
      return fn;
    },
  });
  return {
    runtime: gated,
    get closed() {
      return closed;
    },
    signal: stopping.signal,
    async close() {
      closed = true;
      stopping.abort();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([...inFlight]),
        new Promise((ok) => {
          timer = setTimeout(ok, AWAIT_MS);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
