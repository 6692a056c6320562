// The logs area's in-memory runtime, with stats the test sets per container: the stats area's
// fast tests drive the sampler and the alert engine with known figures and a manual clock.
import { type StatsSample } from '../../src/runtime/runtime.ts';
import { FakeLogsRuntime } from './fake-logs-runtime.ts';

export const MiB = 1024 * 1024;

export class FakeStatsRuntime extends FakeLogsRuntime {
  readonly figures = new Map<string, Partial<StatsSample>>();
  statsCalls = 0;

  /** Sets (merges) what the engine reports for a container from now on. */
  set(engineId: string, f: Partial<StatsSample>): void {
    this.figures.set(engineId, { ...this.figures.get(engineId), ...f });
  }

  async stats(engineId?: string): Promise<StatsSample | null> {
    this.statsCalls++;
    const c = engineId ? this.containers.get(engineId) : undefined;
    if (c?.info.state !== 'running') return null;
    const f = this.figures.get(engineId!) ?? {};
    const memoryUsage = f.memoryUsage ?? 10 * MiB;
    return {
      time: Date.now(),
      cpu: 0,
      memoryUsage,
      memoryLimit: 512 * MiB,
      memoryMaxUsage: memoryUsage,
      swapUsage: 0,
      swapLimit: 0,
      ...f,
    };
  }
}
