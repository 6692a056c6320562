// A new container's readiness: a web container is ready once it answers HTTP on $PORT, any other
// type once it is still running after a short grace. An exit before that is a StartFailure with
// the container's last lines of output.
import { type EmulatorConfig } from '../../config/schema.ts';
import { type Address, type ContainerRuntime } from '../../runtime/runtime.ts';
import { type Clock } from '../../shared/clock.ts';
import { WEB_PORT } from './container-env.ts';
import { startFailure } from './start-failure.ts';

/**
 * The web probe: at once after the start, then 5 ms apart, the interval growing by half each time
 * up to 25 ms. Most processes listen within tens of milliseconds of their start: a fixed 25 ms
 * interval made the first answer wait for most of one interval.
 */
export const PROBE_FIRST_INTERVAL_MS = 5;
export const PROBE_MAX_INTERVAL_MS = 25;

export interface WaitReadyDeps {
  runtime: Pick<ContainerRuntime, 'ready' | 'inspect' | 'logs'>;
  clock: Clock;
  intervals: Pick<EmulatorConfig['intervals'], 'bootTimeoutMs' | 'bootGraceMs'>;
}

export interface Booting {
  /** `web-1`, `worker-2`: how the messages name the container. */
  label: string;
  type: string;
  engineId: string;
  /** Where the emulator reaches its port (ContainerInfo.address). */
  address: Address | null;
  /** Throws when the container must not be kept (its app is being deleted). */
  checkKept: () => void;
}

/** Waits until the container is ready, or fails plainly (exited, timed out, no longer wanted). */
export async function waitReady(deps: WaitReadyDeps, c: Booting): Promise<void> {
  const { runtime, clock } = deps;
  const t = deps.intervals;
  if (c.type !== 'web') {
    // wall-clock grace: a check the process did not exit at once, not platform time
    for (
      const until = performance.now() + t.bootGraceMs;
      performance.now() < until;
      await sleep(Math.min(25, t.bootGraceMs))
    )
      c.checkKept();
    const info = await runtime.inspect(c.engineId);
    if (info?.state !== 'running')
      throw await startFailure(
        runtime,
        c.engineId,
        `container ${c.label} exited with code ${info?.exitCode ?? '?'} right after it started`,
      );
    return;
  }
  const deadline = clock.now() + t.bootTimeoutMs;
  for (let interval = PROBE_FIRST_INTERVAL_MS; ; interval = Math.min(PROBE_MAX_INTERVAL_MS, interval * 1.5)) {
    c.checkKept();
    if (await runtime.ready({ engineId: c.engineId, address: c.address })) return;
    // The engine is asked whether it still runs while the next probe waits, not before it.
    const [info] = await Promise.all([runtime.inspect(c.engineId), sleep(interval)]);
    if (info?.state !== 'running')
      throw await startFailure(
        runtime,
        c.engineId,
        `container ${c.label} exited with code ${info?.exitCode ?? '?'} before listening on $PORT`,
      );
    if (clock.now() > deadline)
      throw new Error(
        `container ${c.label} did not listen on $PORT (${WEB_PORT}) within ${Math.round(t.bootTimeoutMs / 1000)} s`,
      );
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
