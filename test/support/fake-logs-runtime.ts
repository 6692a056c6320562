// The in-memory runtime (fake-runtime.ts) with what the logs area's fast tests drive by hand:
// containers placed by the test that "print" lines on demand, with Docker-like ns timestamps,
// follow streams and start/die/destroy events. Placed containers are pinned: reconciliation may
// "remove" or stop them (they are not the emulator's), the fake only records it.
import { randomBytes } from 'node:crypto';
import { type ContainerInfo, LABELS, type LogLine, type StatsSample } from '../../src/runtime/runtime.ts';
import { FakeRuntime } from './fake-runtime.ts';

export class FakeLogsRuntime extends FakeRuntime {
  /** A container of an app: name `<type>-<index>`. Started (event) unless running is false. */
  add(opts: {
    instanceId: string;
    appId: string;
    appName?: string;
    type: string;
    index: number;
    running?: boolean;
  }): string {
    const engineId = randomBytes(32).toString('hex');
    const labels = {
      [LABELS.managed]: '1',
      [LABELS.instance]: opts.instanceId,
      [LABELS.appId]: opts.appId,
      [LABELS.appName]: opts.appName ?? 'app',
      [LABELS.type]: opts.type,
      [LABELS.index]: String(opts.index),
    };
    const running = opts.running ?? true;
    const info: ContainerInfo = {
      engineId,
      name: `fake-${engineId.slice(0, 8)}`,
      labels,
      state: running ? 'running' : 'created',
      exitCode: null,
      hostPort: null,
      address: null,
      startedAt: null,
      finishedAt: null,
      memoryLimit: 0,
      oomKilled: false,
    };
    const c = { info, lines: [], followers: new Set<never>(), pinned: true, generation: 0 };
    this.containers.set(engineId, c);
    if (running) this.emit(c, 'start');
    return engineId;
  }

  print(engineId: string, text: string, stream: 'stdout' | 'stderr' = 'stdout'): LogLine {
    return this.writeLine(this.containers.get(engineId)!, text, stream);
  }

  /** The container exits: follow streams end, `die` is emitted. */
  exit(engineId: string): void {
    this.exited(this.containers.get(engineId)!, 0);
  }

  restart(engineId: string): void {
    this.exit(engineId);
    const c = this.containers.get(engineId)!;
    c.info.state = 'running';
    this.emit(c, 'start');
  }

  destroy(engineId: string): void {
    const c = this.containers.get(engineId)!;
    this.exit(engineId);
    this.containers.delete(engineId);
    this.emit(c, 'destroy');
  }

  followerCount(engineId: string): number {
    return this.containers.get(engineId)?.followers.size ?? 0;
  }

  /** Placed containers report no stats (FakeStatsRuntime sets figures for them). */
  async stats(engineId: string): Promise<StatsSample | null> {
    return this.containers.get(engineId)?.pinned ? null : super.stats(engineId);
  }
}
